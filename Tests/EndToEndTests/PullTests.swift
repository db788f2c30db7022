import Foundation
import RooftopShared
import Testing

/// Pull: the change feed in pages, with checkpoints that resume exactly, tombstones, class
/// filters, refused foreign checkpoints, and no change skipped while others write.
@Suite("Pull: pages, checkpoints, tombstones, concurrent writers", .sharedServer())
struct PullTests {
    @Test("pages follow the limit, remaining estimates add up, and a checkpoint resumes exactly")
    func paging() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("paging")
        let ids = (0..<25).map { String(format: "o%02d", $0) }
        _ = try await client.push(
            ids.map { Mutations.create(datastore, "Item", $0, fields: ["i": .string($0)]) }, token: user.token)

        let pages = try await client.pullPages(datastore, limit: 10, token: user.token)
        #expect(pages.map(\.changes.count) == [10, 10, 5])
        #expect(pages.map(\.hasMore) == [true, true, false])
        #expect(pages.map { $0.remaining ?? -1 } == [15, 5, 0])
        #expect(pages.flatMap(\.changes).map(\.objectId) == ids, "commit order")

        // Resuming from the first page's checkpoint gives the second page again, exactly.
        let again = try await client.pull(
            PullRequest(datastore: datastore, since: pages[0].checkpoint, limit: 10), token: user.token)
        #expect(again.changes == pages[1].changes)
        #expect(again.hasMore)

        // Caught up: nothing more; then only what changed since, in commit order.
        let last = try #require(pages.last).checkpoint
        let empty = try await client.pull(PullRequest(datastore: datastore, since: last), token: user.token)
        #expect(empty.changes.isEmpty && !empty.hasMore)
        for id in ["o07", "o03", "o19"] {
            _ = try await client.push(
                Mutations.update(datastore, "Item", id, base: 1, [FieldUpdate("touched", .set(true))]),
                token: user.token)
        }
        let delta = try await client.pull(PullRequest(datastore: datastore, since: last), token: user.token)
        #expect(delta.changes.map(\.objectId) == ["o07", "o03", "o19"])
        #expect(delta.changes.allSatisfy { if case .upsert(let object) = $0 { object.version == 2 } else { false } })
    }

    @Test("a page of large records ends early at the page byte limit and resumes exactly")
    func pageByteLimit() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let info = try await client.call(API.getServerInfo, as: ServerInfo.self)
        let datastore = try DatastoreID("large")
        // Records just under the record limit: the page byte limit is reached long before the count.
        let text = Value.string(String(repeating: "L", count: info.limits.maxRecordBytes - 300))
        let perPush = max(1, info.limits.maxPushBytes / info.limits.maxRecordBytes - 1)
        let total = info.limits.maxPullPageBytes / info.limits.maxRecordBytes + 10
        var ids: [String] = []
        for start in stride(from: 0, to: total, by: perPush) {
            let batch = (start..<min(total, start + perPush)).map {
                Mutations.create(datastore, "Large", "l\($0)", fields: ["t": text])
            }
            ids += batch.map(\.objectId)
            let response = try await client.push(batch, token: user.token)
            #expect(response.results.allSatisfy { $0.isApplied })
        }

        let pages = try await client.pullPages(datastore, token: user.token)
        #expect(pages.count >= 2, "a page stops at the byte limit, not at the default page size")
        #expect(pages.flatMap(\.changes).map(\.objectId) == ids)
        for page in pages.dropLast() {
            // What the page counts of each change is its stored body, which holds at least its text.
            let bytes = page.changes.count * (info.limits.maxRecordBytes - 300)
            #expect(bytes <= info.limits.maxPullPageBytes + info.limits.maxRecordBytes)
            #expect(page.hasMore)
        }
        #expect(pages[0].changes.count + (pages[0].remaining ?? 0) == total)
    }

    @Test("a deleted object comes as a tombstone with its version, also in a full pull")
    func tombstones() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("tombstones")
        _ = try await client.push(
            ["a", "b", "c"].map { Mutations.create(datastore, "Item", $0, fields: ["x": 1]) }, token: user.token)
        let checkpoint = try #require(try await client.pullPages(datastore, token: user.token).last).checkpoint
        let deleted = try await client.push(Mutations.delete(datastore, "Item", "b", base: 1), token: user.token)

        let delta = try await client.pull(PullRequest(datastore: datastore, since: checkpoint), token: user.token)
        #expect(
            delta.changes == [
                .tombstone(className: "Item", objectId: "b", version: try #require(deleted.appliedVersion))
            ])
        let full = try await client.pullPages(datastore, token: user.token).flatMap(\.changes)
        #expect(full.count == 3)
        #expect(full.last == .tombstone(className: "Item", objectId: "b", version: 2))
        #expect(
            Set(full.compactMap { if case .upsert(let object) = $0 { object.objectId } else { nil } }) == ["a", "c"])
    }

    @Test("a class filter returns only those classes; an invalid class name is refused")
    func classFilter() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("filtered")
        var mutations: [Mutation] = []
        for className in ["Alpha", "Beta", "Gamma"] {
            for index in 0..<4 {
                mutations.append(Mutations.create(datastore, className, "\(className)\(index)", fields: ["i": 1]))
            }
        }
        _ = try await client.push(mutations, token: user.token)

        let pages = try await client.pullPages(datastore, limit: 3, classes: ["Alpha", "Gamma"], token: user.token)
        let changes = pages.flatMap(\.changes)
        #expect(changes.count == 8)
        #expect(Set(changes.map(\.className)) == ["Alpha", "Gamma"])
        #expect(pages.first?.remaining == 5)
        let none = try await client.pull(PullRequest(datastore: datastore, classes: []), token: user.token)
        #expect(none.changes.isEmpty && !none.hasMore)

        let bad = try await client.send(
            API.pull, body: PullRequest(datastore: datastore, classes: ["Al pha"]), token: user.token)
        #expect(bad.status == 400)
        #expect(bad.error?.code == .illegalArgument)
    }

    @Test("a forged, tampered or another user's checkpoint is refused with illegalArgument")
    func foreignCheckpoints() async throws {
        let (_, client) = try SharedServer.require()
        let alice = try await client.newUser("alice")
        let bob = try await client.newUser("bob")
        let shared = try await client.shareableDatastore(owner: alice, sharedWith: [bob], role: .viewer)
        _ = try await client.push(Mutations.create(shared, "Doc", "d1", fields: ["x": 1]), token: alice.token)
        let alicesShared = try await client.pull(PullRequest(datastore: shared), token: alice.token).checkpoint
        let alicesPrivate = try await client.pull(PullRequest(datastore: .default), token: alice.token).checkpoint
        let bobsPrivate = try await client.pull(PullRequest(datastore: .default), token: bob.token).checkpoint

        var tampered = Array(alicesShared.rawValue)
        let flip = tampered.firstIndex(where: { $0.isLetter }) ?? 0
        tampered[flip] = tampered[flip] == "A" ? "B" : "A"
        let attempts: [(String, DatastoreID, Checkpoint)] = [
            ("garbage", shared, Checkpoint("c:1042")),
            ("empty", shared, Checkpoint("")),
            ("tampered", shared, Checkpoint(String(tampered))),
            ("another user's, same datastore", shared, alicesShared),
            ("another datastore's", .default, alicesShared),
            ("another user's private datastore", .default, alicesPrivate),
        ]
        for (what, datastore, checkpoint) in attempts {
            let reply = try await client.send(
                API.pull, body: PullRequest(datastore: datastore, since: checkpoint), token: bob.token)
            #expect(reply.status == 400, "\(what): \(reply.text)")
            #expect(reply.error?.code == .illegalArgument, "\(what)")
        }
        // Bob's own checkpoint still works.
        let own = try await client.send(
            API.pull, body: PullRequest(datastore: .default, since: bobsPrivate), token: bob.token)
        #expect(own.status == 200)
    }

    @Test("a reader paging with checkpoints while writers commit never skips a change")
    func concurrentWriters() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("busy")
        let writers = 4
        let rounds = 40

        // Each writer creates objects and updates or deletes earlier ones, one push per step.
        let done = DoneFlag()
        let writing = Task {
            defer { done.set() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var versions: [String: Int64] = [:]
                        for round in 0..<rounds {
                            let mutation: Mutation
                            if round % 5 == 4, let (id, version) = versions.first(where: { $0.key.hasSuffix("1") }) {
                                mutation = Mutations.delete(datastore, "Busy", id, base: version)
                                versions[id] = nil
                            } else if round % 3 == 2, let (id, version) = versions.randomElement() {
                                mutation = Mutations.update(
                                    datastore, "Busy", id, base: version, [FieldUpdate("n", .increment(1))])
                            } else {
                                mutation = Mutations.create(datastore, "Busy", "w\(writer)r\(round)", fields: ["n": 0])
                            }
                            let result = try await client.push(mutation, token: user.token)
                            guard let version = result.appliedVersion else { throw FixtureError("refused: \(result)") }
                            if case .update = mutation.change { versions[mutation.objectId] = version }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }

        var seen: [String: Int64] = [:]
        var deleted: Set<String> = []
        var checkpoint: Checkpoint?
        var pages = 0
        func apply(_ page: PullResponse) {
            for change in page.changes {
                switch change {
                case .upsert(let object):
                    #expect(object.version >= seen[object.objectId] ?? 0, "versions never go back")
                    seen[object.objectId] = object.version
                    deleted.remove(object.objectId)
                case .tombstone(_, let objectId, _):
                    seen[objectId] = nil
                    deleted.insert(objectId)
                case .removal(_, let objectId):
                    Issue.record("unexpected removal of \(objectId)")
                }
            }
            checkpoint = page.checkpoint
            pages += 1
        }
        // Page until caught up after the writers stopped (each pull is itself the pacing).
        while true {
            let writersDone = done.isSet
            let page = try await client.pull(
                PullRequest(datastore: datastore, since: checkpoint, limit: 7), token: user.token)
            apply(page)
            if !page.hasMore && writersDone { break }
        }
        try await writing.value

        let final = try await client.allObjects(datastore, className: "Busy", token: user.token)
        #expect(final.count == seen.count)
        #expect(final.mapValues(\.version) == seen, "the reader's copy matches the server")
        #expect(deleted.isDisjoint(with: final.keys))
        #expect(pages > 3, "the reader paged while writers wrote")
    }
}
