import Foundation
import GRDB
@_spi(Testing) @testable import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

/// Progress reports of pulls and pushes against the real server add up: counts never go back,
/// the last report says everything was done, and the count matches what moved.
///
/// The client never names a pull page size and the server's default page is 500 objects, so the
/// pulling client's transport asks for pages of 25 (``SyncTestTransport``).
@Suite("Client sync: progress", .sharedServer())
struct ClientSyncProgressTests {
    @Test("a pull of 120 objects in pages of 25 reports rising counts ending at the total")
    func pullProgress() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Row")
        let objectCount = 120
        try await withSyncHarness { harness in
            let user = try await api.newUser("puller")
            for batch in stride(from: 0, to: objectCount, by: 40) {
                let mutations = (batch..<batch + 40).map { n in
                    Mutations.create(.default, className, fields: ["n": .int(Int64(n))])
                }
                let response = try await api.push(mutations, token: user.token)
                #expect(response.results.allSatisfy { $0.isApplied })
            }
            let (client, transport) = try harness.controlledClient(server, pullPageSize: 25)
            try await client.logIn(user)
            let reports = SyncLocked<[SyncProgress]>([])
            let broadcast = StreamRecorder(client.sync.progress)
            let changed = try await client.sync.pull(datastore: .default) { progress in
                reports.update { $0.append(progress) }
            }

            #expect(changed == objectCount)
            let seen = reports.current
            try expectConsistent(seen, phase: .pull, datastore: .default, total: objectCount)
            let pages = transport.requests(to: "/v1/pull")
            #expect(pages >= objectCount / 25, "the pull came in pages: \(pages) requests")
            #expect(seen.count >= pages, "a report per page at least")
            #expect(try await client.localIds(className, in: .default).count == objectCount)
            // Stored as the server sent them: the server splices each stored body after the
            // envelope, where the client's own encoding would put the fields first.
            let stored = try client.core.store.read { db in
                try String.fetchAll(db, sql: "SELECT server FROM objects WHERE class_name = ?", arguments: [className])
            }
            #expect(stored.count == objectCount)
            #expect(stored.allSatisfy { $0.contains(#""version":1,"fields":{"n":"#) }, "\(stored.first ?? "")")
            // The broadcast stream carries the same reports.
            _ = try await broadcast.first("the last broadcast report") { $0.isFinished && $0.phase == .pull }
            #expect(broadcast.elements.filter { $0.phase == .pull } == seen)
        }
    }

    /// The option's thresholds are the test's (a load from 500 changes ahead, passes of 300):
    /// seeding the default 20,000 would take most of a minute in a debug build.
    @Test("a first sync as a bulk load: every object arrives, passes run during the pull, queries answer after it, the load ends")
    func bulkInitialSync() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Bulk")
        try await api.setClass(className, indexes: [["n"], ["group", "n"]])
        let objectCount = 1_200
        try await withSyncHarness { harness in
            let user = try await api.newUser("loader")
            for batch in stride(from: 0, to: objectCount, by: 400) {
                let mutations = (batch..<batch + 400).map { n in
                    Mutations.create(.default, className, fields: ["n": .int(Int64(n)), "group": .int(Int64(n % 5))])
                }
                let response = try await api.push(mutations, token: user.token)
                #expect(response.results.allSatisfy { $0.isApplied })
            }
            let (client, _) = try harness.controlledClient(server, pullPageSize: 100, bulkInitialSync: true)
            let store = client.core.store
            #expect(store.bulkLoading.withLock { $0.enabled }, "the configuration's option reaches the store")
            store.bulkLoading.withLock { settings in
                settings.thresholds.threshold = 500
                settings.thresholds.passSize = 300
                settings.thresholds.growth = 0
            }
            try await client.logIn(user)
            let scope = client.core.scope
            // Where the load stood at each report (the reports come as pages are read and written).
            let bounds = SyncLocked<[Int64]>([])
            let failures = SyncLocked<[String]>([])
            let changed = try await client.sync.pull(datastore: .default) { _ in
                do {
                    if let bound = try store.read({ db in try LocalStore.bulkBound(scope: scope, datastore: .default, db) }) {
                        bounds.update { $0.append(bound) }
                    }
                } catch {
                    failures.update { $0.append("\(error)") }
                }
            }
            #expect(changed == objectCount)
            #expect(failures.current.isEmpty)
            #expect(Set(bounds.current).count >= 2, "a load was under way, and a pass moved it: \(Set(bounds.current))")
            #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM bulk_loads") } == 0)
            let twos = try await client.query(className, in: .default).where(Field("group") == 2).order(by: "n", descending: true)
                .limit(10).fromLocalDatastore().find()
            #expect(twos.totalCount == objectCount / 5)
            let highest: [Int64] = (0..<10).map { Int64(objectCount - 3 - 5 * $0) }
            let found: [Int64] = twos.objects.compactMap { $0["n"]?.intValue }
            #expect(found == highest)
            #expect(try await client.query(className, in: .default).where(Field("n") < 100).fromLocalDatastore().count() == 100)
            // Every object has an entry per index (and `group, n` counts per group).
            let entries = try store.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM index_entries e JOIN objects o ON o.key = e.object_key WHERE o.class_name = ?", arguments: [className])
            }
            #expect(entries == 2 * objectCount)
        }
    }

    /// A push carries at most 2 MiB of changes: 80 changes of 60 KB each take at least three.
    /// The queue's own loop retries quickly here, so when the connection returns it sends changes
    /// while the push runs: those count too (they once did not, and a push of 80 ended at 26 of 26).
    /// (Which rounds the push runs itself depends on that race, so intermediate reports are not
    /// required here; the pull test requires them.)
    @Test("a push of 80 large queued changes, while the queue also drains on its own, counts every change")
    func pushProgress() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Row")
        let changeCount = 80
        let payload = Value.string(String(repeating: "y", count: 60_000))
        try await withSyncHarness { harness in
            let user = try await api.newUser("drainer")
            let (client, gate) = try harness.controlledClient(server, blockingPushes: true)
            try await client.logIn(user)
            for n in 0..<changeCount {
                let row = client.object(className, in: .default)
                row["n"] = .int(Int64(n))
                row["payload"] = payload
                try await row.saveEventually()
            }
            try await TestWait.until("a refused push attempt") { gate.requests(to: "/v1/push") > 0 }
            #expect(try await api.count(.default, className: className, token: user.token) == 0)
            let refusedPushes = gate.requests(to: "/v1/push")
            gate.blocksPushes = false
            let reports = SyncLocked<[SyncProgress]>([])
            try await client.sync.push { progress in reports.update { $0.append(progress) } }
            try expectConsistent(reports.current, phase: .push, datastore: nil, total: changeCount, intermediate: false)
            #expect(reports.current.first?.processed == 0 && reports.current.first?.total == changeCount)
            #expect(gate.requests(to: "/v1/push") - refusedPushes >= 3, "the changes needed several pushes")
            #expect(!(try client.outbox.hasPendingWrites))
            #expect(try await api.count(.default, className: className, token: user.token) == changeCount)
        }
    }

    /// Counts never decrease, no report claims more done than its total, exactly the last report
    /// is final, and it has done everything.
    private func expectConsistent(
        _ reports: [SyncProgress], phase: SyncProgress.Phase, datastore: DatastoreID?, total: Int,
        intermediate: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let last = try #require(reports.last, sourceLocation: sourceLocation)
        for (earlier, later) in zip(reports, reports.dropFirst()) {
            #expect(later.processed >= earlier.processed, "\(reports)", sourceLocation: sourceLocation)
        }
        for report in reports {
            #expect(report.phase == phase && report.datastore == datastore, sourceLocation: sourceLocation)
            #expect(report.error == nil, sourceLocation: sourceLocation)
            if let reported = report.total { #expect(report.processed <= reported, "\(report)", sourceLocation: sourceLocation) }
        }
        #expect(reports.filter(\.isFinished) == [last], sourceLocation: sourceLocation)
        #expect(last.processed == total && last.total == total, "\(last)", sourceLocation: sourceLocation)
        #expect(last.fractionCompleted == 1, sourceLocation: sourceLocation)
        guard intermediate else { return }
        #expect(reports.dropLast().contains { $0.processed > 0 && $0.processed < total }, "intermediate reports: \(reports)", sourceLocation: sourceLocation)
    }
}
