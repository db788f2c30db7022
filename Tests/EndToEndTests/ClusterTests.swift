import Foundation
import Rooftop
import RooftopShared
import RooftopTestSupport
import Testing

/// Several server processes on one PostgreSQL database: writes made through one are heard live
/// through the other, the change feed stays complete and ordered under concurrent writers on both,
/// and mutation IDs, checkpoints, sessions and log-in throttling hold across them.
///
/// Runs whenever a PostgreSQL test cluster is there (``TestPostgres``), whatever storage the
/// other end-to-end tests use.
@Suite("Cluster: two server processes on one PostgreSQL database", .enabled(if: TestPostgres.enabled))
struct ClusterTests {
    /// Starts two servers on a new schema of one database, the second with the first's TLS files
    /// (clients trust either through one CA).
    static func startPair(_ harness: ClientSyncHarness, extraArguments: [String] = []) async throws
        -> (ServerProcess, ServerProcess)
    {
        let first = TemporaryDirectory.make(prefix: "rooftop-cluster-a")
        let second = TemporaryDirectory.make(prefix: "rooftop-cluster-b")
        guard let cluster = TestPostgres.url else { throw FixtureError("no PostgreSQL test cluster") }
        let schema = "cluster_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let storage = ["--storage", cluster + (cluster.contains("?") ? "&" : "?") + "schema=" + schema]
        let a = try await harness.startServer(dataDirectory: first, extraArguments: storage + extraArguments)
        try FileManager.default.copyItem(atPath: first + "/tls", toPath: second + "/tls")
        let b = try await harness.startServer(dataDirectory: second, extraArguments: storage + extraArguments)
        return (a, b)
    }

    @Test("a client subscribed through server B hears a write made through server A, promptly")
    func liveAcrossServers() async throws {
        try await withSyncHarness { harness in
            let (a, b) = try await Self.startPair(harness)
            let live = try await harness.liveWatch(writerServer: a, watcherServer: b)
            let (api, owner, datastore, writer, watcher) = (live.api, live.owner, live.datastore, live.writer, live.watcher)

            let note = writer.object("Note", in: datastore)
            note["text"] = "through A"
            note.acl = .publicReadWrite
            let start = ContinuousClock.now
            try await note.save()
            try await TestWait.until("the note reaches the watcher on B") {
                await watcher.hasLocalCopy("Note", note.objectId, in: datastore)
            }
            print("cluster: a write through A reached a subscriber of B in \(ContinuousClock.now - start)")
            let seen = try await watcher.query("Note", in: datastore).fromLocalDatastore().getObject(note.objectId)
            #expect(seen.string("text") == "through A")

            // A note the watcher cannot read does not reach it; the public one written after it does.
            let secret = try await api.create(
                "Note", in: datastore, fields: ["text": "owner only"], acl: .only(owner.id), as: owner)
            let next = try await api.create(
                "Note", in: datastore, fields: ["text": "public"], acl: .publicReadWrite, as: owner)
            try await TestWait.until("the next public note reaches the watcher") {
                await watcher.hasLocalCopy("Note", next.objectId, in: datastore)
            }
            #expect(!(await watcher.hasLocalCopy("Note", secret.objectId, in: datastore)))
            await watcher.sync.stop()
        }
    }

    @Test("concurrent writers through two servers, one puller: every committed change arrives, once, in order")
    func changeFeedUnderConcurrency() async throws {
        try await withSyncHarness { harness in
            let (a, b) = try await Self.startPair(harness)
            let apis = [try harness.api(a), try harness.api(b)]
            let owner = try await apis[0].newUser("owner")
            let datastore = try await apis[0].shareableDatastore(owner: owner)
            let writers = 8
            let rounds = 25
            let done = SyncLocked(false)

            // The puller alternates servers page by page, carrying one checkpoint.
            let puller = Task { () throws -> [String: Int64] in
                var seen: [String: Int64] = [:]
                var checkpoint: Checkpoint?
                var page = 0
                while true {
                    let finished = done.current
                    let response = try await apis[page % 2].pull(
                        PullRequest(datastore: datastore, since: checkpoint, limit: 50), token: owner.token)
                    page += 1
                    for change in response.changes {
                        guard case .upsert(let object) = change else { continue }
                        // In order: an object never comes back older than it was seen.
                        if let earlier = seen[object.objectId], earlier >= object.version {
                            Issue.record("\(object.objectId) v\(object.version) after v\(earlier)")
                        }
                        seen[object.objectId] = object.version
                    }
                    checkpoint = response.checkpoint
                    if finished && !response.hasMore { return seen }
                }
            }
            // Writers create their own objects and update shared ones, through both servers.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for round in 0..<rounds {
                            let api = apis[(writer + round) % 2]
                            var mutations = [
                                Mutations.create(datastore, "Item", "w\(writer)-\(round)", fields: ["n": .int(Int64(round))])
                            ]
                            if round > 0 {
                                mutations.append(
                                    Mutations.update(
                                        datastore, "Item", "w\(writer)-0", base: nil,
                                        [FieldUpdate("n", .increment(1))]))
                            }
                            let response = try await api.push(mutations, token: owner.token)
                            let applied = response.results.allSatisfy(\.isApplied)
                            #expect(applied, "\(response.results)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            done.update { $0 = true }
            let seen = try await withDeadline(.seconds(60), "the puller to catch up") { try await puller.value }
            let truth = try await apis[1].allObjects(datastore, className: "Item", token: owner.token)
            #expect(truth.count == writers * rounds)
            #expect(seen.count == truth.count, "the feed missed \(Set(truth.keys).subtracting(seen.keys).sorted())")
            for (objectId, object) in truth {
                #expect(seen[objectId] == object.version, "\(objectId): seen v\(seen[objectId] ?? 0), stored v\(object.version)")
            }
            #expect(truth["w0-0"]?.fields["n"] == .int(Int64(rounds - 1)))
        }
    }

    @Test("one client switches servers mid-sync; a retried push and the checkpoint hold across servers")
    func clientSwitchesServers() async throws {
        try await withSyncHarness { harness in
            let (a, b) = try await Self.startPair(harness)
            let api = try harness.api(a)
            let owner = try await api.newUser("owner")
            let datastore = try await api.shareableDatastore(owner: owner)
            for index in 0..<30 {
                _ = try await api.create(
                    "Note", in: datastore, fields: ["n": .int(Int64(index))], acl: .publicReadWrite, as: owner)
            }
            // A push made through A and retried through B applies once.
            let batch = [
                Mutations.create(datastore, "Counter", "c", fields: ["n": 0]),
                Mutations.update(datastore, "Counter", "c", base: nil, [FieldUpdate("n", .increment(5))]),
            ]
            let first = try await api.push(batch, token: owner.token)
            let retried = try await harness.api(b).push(batch, token: owner.token)
            #expect(retried.results.map(\.decision) == first.results.map(\.decision))
            #expect(
                try await harness.api(b).object(datastore, className: "Counter", objectId: "c", token: owner.token)?
                    .fields["n"] == 5)

            // The client syncs through A, then (same cache, new process of the app) through B.
            let file = harness.cacheFile("switcher")
            let onA = try await harness.client(a, file: file)
            try await onA.logIn(owner)
            _ = try await onA.datastores.open(datastore).sync()
            let local = onA.object("Note", in: datastore)
            local["n"] = 100
            local.acl = .publicReadWrite
            try await local.save()
            await harness.shutdown(onA)

            _ = try await api.create("Note", in: datastore, fields: ["n": 31], acl: .publicReadWrite, as: owner)
            let onB = try await harness.client(b, file: file)
            let synced = try await onB.datastores.open(datastore).sync()
            // The checkpoint A signed goes on on B: only what changed since (the client's own note
            // and the new one), not the whole datastore again.
            #expect(synced["Note"]?.count == 2)
            let truth = try await harness.api(b).allObjects(datastore, className: "Note", token: owner.token)
            #expect(truth.count == 32)
            #expect(truth[local.objectId]?.fields["n"] == 100)
            for objectId in truth.keys {
                #expect(await onB.hasLocalCopy("Note", objectId, in: datastore), "\(objectId) on the client")
            }
        }
    }

    @Test("log-outs and failed log-ins made through one server count on the other")
    func sessionsAndThrottleAcrossServers() async throws {
        try await withSyncHarness { harness in
            let (a, b) = try await Self.startPair(harness)
            let (apiA, apiB) = (try harness.api(a), try harness.api(b))
            let user = try await apiA.newUser("victim")
            // A session ended through A no longer works through B.
            #expect(try await apiB.send(API.getCurrentUser, token: user.token).status == 200)
            #expect(try await apiA.send(API.logOut, token: user.token).status == 204)
            #expect(try await apiB.send(API.getCurrentUser, token: user.token).status == 401)
            // Five failures (the default limit) through A: B refuses the next attempt, even with
            // the right password. B hears A's failures once it listens, which a loaded machine
            // may make it do after its start: a round whose failures B did not hear is tried
            // again with another user (A refuses more for the first without telling B).
            var throttledOnB = false
            for round in 1...6 where !throttledOnB {
                let victim = round == 1 ? user : try await apiA.newUser("victim")
                for _ in 0..<5 {
                    let reply = try await apiA.send(
                        API.logIn, body: LogInRequest(username: victim.username, password: "wrong"))
                    #expect(reply.status == 401)
                }
                do {
                    try await TestWait.until("B throttles \(victim.username)") {
                        let reply = try await apiB.send(
                            API.logIn, body: LogInRequest(username: victim.username, password: victim.password))
                        return reply.status == 429
                    }
                    throttledOnB = true
                } catch {
                    continue
                }
            }
            #expect(throttledOnB, "B throttled a user name whose failures went through A")
        }
    }

    @Test("a dashboard session signed in through A opens pages on B, and signing out through A ends it on B")
    func dashboardSessionsAcrossServers() async throws {
        try await withSyncHarness { harness in
            let (a, b) = try await Self.startPair(harness)
            let (pagesA, pagesB) = (try DashboardTests.Pages(a), try DashboardTests.Pages(b))
            do {
                let cookie = try await DashboardTests.signIn(pagesA)
                let onB = try await DashboardTests.request(pagesB, .GET, "/dashboard/overview", cookie: cookie)
                #expect(onB.status == 200)
                let token = try DashboardTests.csrf(in: onB.body)
                let out = try await DashboardTests.request(pagesA, .POST, "/dashboard/logout", form: "csrf=" + token, cookie: cookie)
                #expect(out.status == 303)
                let after = try await DashboardTests.request(pagesB, .GET, "/dashboard/overview", cookie: cookie)
                #expect(after.status == 303 && after.headers["Location"].first == "/dashboard/login", "ended on B too")
                try await pagesA.http.shutdown()
                try await pagesB.http.shutdown()
            } catch {
                try? await pagesA.http.shutdown()
                try? await pagesB.http.shutdown()
                throw error
            }
        }
    }

    @Test("wrong admin keys sent through one server count on the other")
    func adminKeyThrottleAcrossServers() async throws {
        try await withSyncHarness { harness in
            let (a, b) = try await Self.startPair(harness)
            let (apiA, apiB) = (try harness.api(a), try harness.api(b))
            // Five wrong keys (the default limit) through A, from one address; B, which never saw
            // them, then refuses that address even the right key. B hears A's failures once it
            // listens, which a loaded machine may make it do after its start: a round whose
            // failures B did not hear is tried again from a new address (A refuses more from the
            // old one without telling B).
            var throttledOnB = false
            for round in 1...6 where !throttledOnB {
                let address = "127.0.6.\(10 + round)"
                for _ in 0..<5 {
                    let reply = try await apiA.send(
                        .GET, "/v1/users", headers: ["X-Rooftop-Admin-Key": "wrong-admin-key-0123456789"], from: address)
                    #expect(reply.status == 401)
                }
                do {
                    try await TestWait.until("B throttles \(address)'s admin keys") {
                        let reply = try await apiB.send(
                            .GET, "/v1/users", headers: ["X-Rooftop-Admin-Key": b.adminKey], from: address)
                        return reply.status == 429
                    }
                    throttledOnB = true
                } catch {
                    continue
                }
            }
            #expect(throttledOnB, "B throttled an address whose wrong keys went through A")
            // Another address still gets in with the right key.
            let other = try await apiB.send(.GET, "/v1/users", headers: ["X-Rooftop-Admin-Key": b.adminKey], from: "127.0.6.2")
            #expect(other.status == 200)
        }
    }
}
