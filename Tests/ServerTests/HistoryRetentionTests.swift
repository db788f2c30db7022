import GRDB
import Logging
@testable import RooftopServer
import RooftopShared
import Testing

/// The retention sweep keeps what sync retains bounded, and whatever builds on swept history is
/// told so (`historyExpired`) instead of being answered wrongly: a checkpoint that would miss a
/// swept delete, a change whose merge would miss swept operations.
@Suite("History retention")
struct HistoryRetentionTests {
    private let retention: Duration = .seconds(86_400)

    private func mutation(_ objectId: String, base: Int64? = nil, _ change: ObjectChange) -> Mutation {
        Mutation(datastore: .app, className: "Note", objectId: objectId, baseVersion: base, change: change)
    }

    @Test(
        "a sweep past the retention removes tombstones, old operations and results, and expires what built on them",
        arguments: StorageBackend.tested)
    func sweepAndExpire(backend: StorageBackend) async throws {
        let time = ServerClockTests.ManualTime(Timestamp(millisecondsSinceEpoch: 1_700_000_000_000))
        try await OpenAPITestServer.with(backend: backend, configure: {
            $0.clock = time.clock
            $0.historyRetention = retention
        }) { server in
            let session = try await server.services.auth.signUp(SignUpRequest(username: "keeper", password: "password-1"))
            let context = try await server.services.auth.authenticate(
                sessionToken: session.sessionToken, adminKey: nil, clientAddress: nil
            ).context
            let push = server.services.push
            let pull = server.services.pull
            let sweeper = HistorySweeper(
                storage: server.storage, retention: retention, interval: .seconds(3600), clock: time.clock,
                logger: Logger(label: "test"))

            let created = try await push.push(
                PushRequest(mutations: [
                    mutation("a", .update([FieldUpdate("n", .set(1))])), mutation("b", .update([FieldUpdate("n", .set(2))])),
                ]), context: context)
            #expect(created.results.allSatisfy { $0.isApplied })
            let early = try await pull.pull(PullRequest(datastore: .app), context: context)
            #expect(early.changes.count == 2)
            _ = try await push.push(
                PushRequest(mutations: [
                    mutation("a", base: 1, .update([FieldUpdate("n", .increment(1))])), mutation("b", base: 1, .delete),
                ]), context: context)

            // The first sweep only takes a mark; within the retention nothing goes.
            await sweeper.sweep()
            time.advance(by: .seconds(3600))
            await sweeper.sweep()
            #expect(try await pull.pull(PullRequest(datastore: .app, since: early.checkpoint), context: context).changes.count == 2)

            // Past the retention: the history up to the mark is swept.
            time.advance(by: retention)
            let swept = try await sweeper.sweepOnce()
            #expect(swept.datastores == 1)
            #expect(swept.tombstones == 1)
            #expect(swept.operations == 2)  // a's creation and increment (b's went with its tombstone)
            #expect(swept.mutationResults == 4)  // the four pushed mutations, recorded at the start

            // A checkpoint from before: pull from scratch, which no longer sends b's tombstone.
            await #expect(throws: RooftopError.self) {
                _ = try await pull.pull(PullRequest(datastore: .app, since: early.checkpoint), context: context)
            }
            do {
                _ = try await pull.pull(PullRequest(datastore: .app, since: early.checkpoint), context: context)
            } catch let error as RooftopError {
                #expect(error.code == .historyExpired)
            }
            let fresh = try await pull.pull(PullRequest(datastore: .app), context: context)
            #expect(try fresh.response().changes.map(\.objectId) == ["a"])

            // A change based on a swept version, and one on a swept tombstone: refused, not merged.
            let stale = try await push.push(
                PushRequest(mutations: [
                    mutation("a", base: 1, .update([FieldUpdate("n", .increment(5))])),
                    mutation("b", base: 1, .update([FieldUpdate("n", .set(9))])),
                ]), context: context)
            #expect(stale.results.map { $0.error?.code } == [.historyExpired, .historyExpired])
            await #expect(throws: RooftopError.self) {
                _ = try await server.services.objects.operations(
                    datastore: .app, className: "Note", objectId: "a", after: 1, context: context)
            }
            // On the current version everything works as before, merges included.
            let current = try await push.push(
                PushRequest(mutations: [mutation("a", base: 2, .update([FieldUpdate("n", .increment(5))]))]),
                context: context)
            #expect(current.results.first?.isApplied == true)
            let concurrent = try await push.push(
                PushRequest(mutations: [mutation("a", base: 2, .update([FieldUpdate("m", .set(1))]))]),
                context: context)
            guard case .applied(_, let version, let object?, _)? = concurrent.results.first else {
                Issue.record("\(concurrent)")
                return
            }
            #expect(version == 4)
            #expect(object.fields == ["n": 7, "m": 1])
            #expect(try await pull.pull(PullRequest(datastore: .app, since: fresh.checkpoint), context: context).changes.count == 1)

            // The next advance needs another retention to pass: the mark just taken.
            time.advance(by: .seconds(3600))
            #expect(try await sweeper.sweepOnce().isEmpty)

            // The results recorded since go once they are older than the retention too.
            time.advance(by: retention)
            let results = try await sweeper.sweepOnce()
            #expect(results.mutationResults == 4)
            let ids = created.results.map(\.mutationId)
            #expect(try await server.storage.mutationResults(scope: ObjectService.idempotencyScope(context), ids: ids).isEmpty)
        }
    }

    @Test("a sweep goes on batch after batch: thousands of tombstones, operations and results, nothing newer")
    func manyBatches() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        let count = SQLiteStorage.sweepBatch * 2 + 500
        try await storage.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO datastores (key, id, scope, owner_id, created_at, sequence, record_count, size_bytes)
                    VALUES (1, 'default', 'u1', 'u1', 0, ?, 0, 1000)
                    """,
                arguments: [count * 2])
            for index in 1...count {
                // A tombstone at an old sequence, a live object changed at a new one with one old
                // and one new operation, an old and a new mutation result.
                let dead = Int64(index)
                let live = Int64(count + index)
                try db.execute(
                    sql: """
                        INSERT INTO objects (key, datastore_key, class_name, object_id, body, version, sequence, deleted, size_bytes)
                        VALUES (?, 1, 'T', ?, '{"fields":{}}', 2, ?, 1, 0), (?, 1, 'T', ?, '{"fields":{}}', 2, ?, 0, 10)
                        """,
                    arguments: [dead, "dead\(index)", dead, live, "live\(index)", live])
                try db.execute(
                    sql: """
                        INSERT INTO object_operations (object_key, version, operation, sequence)
                        VALUES (?, 1, '{}', ?), (?, 2, '{}', ?), (?, 1, '{}', ?)
                        """,
                    arguments: [live, dead, live, live, dead, dead])
                try db.execute(
                    sql: """
                        INSERT INTO mutation_results (scope, mutation_id, version, created_at)
                        VALUES ('u1', ?, 1, 10), ('u1', ?, 1, 5000)
                        """,
                    arguments: ["old\(index)", "new\(index)"])
            }
        }
        // The first sweep takes the mark (at the sequence of the last change: everything so far).
        _ = try await storage.sweepHistory(cutoff: Timestamp(millisecondsSinceEpoch: 0), now: Timestamp(millisecondsSinceEpoch: 100))
        let swept = try await storage.sweepHistory(
            cutoff: Timestamp(millisecondsSinceEpoch: 1000), now: Timestamp(millisecondsSinceEpoch: 2000))
        #expect(swept.tombstones == count)
        // Everything at or below the mark: both operations of every live object, and the
        // tombstones' own with them (not counted as operations).
        #expect(swept.operations == count * 2)
        #expect(swept.mutationResults == count)
        let left = try await storage.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM objects") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM object_operations") ?? -1,
                try String.fetchAll(db, sql: "SELECT DISTINCT substr(mutation_id, 1, 3) FROM mutation_results")
            )
        }
        #expect(left.0 == count)
        #expect(left.1 == 0)
        #expect(left.2 == ["new"])
        let faults = try await storage.valueIndexFaults()
        #expect(faults.isEmpty, "\(faults.prefix(5))")
        try await storage.close()
    }
}
