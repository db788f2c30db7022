import GRDB
import RooftopSQL
import RooftopShared
import Testing

@testable import RooftopServer

/// What the SQLite writer reads ahead for a push (``SQLiteObjectWriter/ReadAhead``) against what
/// its savepoints take back: the datastore's counters it keeps, and results recorded in the table
/// of schemas before v4. (``StorageConformance/readAhead(_:)`` covers what both backends share.)
@Suite struct SQLiteReadAheadTests {
    @Test("a write that fails after storing its object leaves no gap in the feed, no count and no reader set behind")
    func failureAfterTheStore() async throws {
        try await SQLiteRowFieldsTests.withStorage(batch: 1000) { storage in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let ids = try (0..<4).map { try MutationID("m\($0)") }
            let outcomes = try await storage.writeObjects { writer -> [String] in
                let sqlite = try #require(writer as? SQLiteObjectWriter)
                // The result of m1 cannot be recorded: its write fails after the object, its
                // operation and the datastore's counters were written, and its savepoint takes
                // them back.
                try sqlite.db.execute(
                    sql: """
                        CREATE TEMP TRIGGER refuse_m1 BEFORE INSERT ON mutation_results WHEN new.mutation_id = 'm1'
                        BEGIN SELECT RAISE(ABORT, 'injected'); END
                        """)
                let requests = ids.enumerated().map { index, id in
                    ObjectWriteRequest(
                        datastoreKey: key, className: "T", objectId: "o\(index)", baseVersion: nil, mutation: ("u1", id))
                }
                try writer.lock(requests)
                let written = requests.map { request in
                    do {
                        // o1 makes the reader set of u9, which its savepoint takes back: o2 makes it again.
                        let acl = ["o1", "o2"].contains(request.objectId) ? StorageConformance.readable(by: .user("u9")) : nil
                        let outcome = try writer.write(request) { _ in
                            StorageWrites.decision(
                                StorageConformance.object(request.objectId, fields: ["n": 1], acl: acl), deleted: false)
                        }
                        return "\(outcome)".hasPrefix("written") ? "written" : "\(outcome)"
                    } catch {
                        return "thrown"
                    }
                }
                try sqlite.db.execute(sql: "DROP TRIGGER refuse_m1")
                return written
            }
            #expect(outcomes == ["written", "thrown", "written", "written"])
            let feed = try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil)
            #expect(feed.map(\.objectId) == ["o0", "o2", "o3"])
            #expect(feed.map(\.sequence) == [1, 2, 3], "the failed write's number is given to the next")
            let datastore = try #require(try await storage.datastore(key: key))
            #expect(datastore.sequence == 3)
            #expect(datastore.recordCount == 3)
            let recounted = try await storage.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM objects WHERE datastore_key = ? AND deleted = 0", arguments: [key])
            }
            #expect(recounted == 3)
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "o1") == nil)
            let byU9 = try await storage.find(Query("T"), datastoreKey: key, readers: ["u9"], limit: 10)
            #expect(byU9.objects.map(\.objectId) == ["o2"])
            let filed = try await storage.pool.read { db in
                try String.fetchOne(
                    db,
                    sql: "SELECT s.principals FROM objects o JOIN reader_sets s ON s.id = o.readers WHERE o.object_id = 'o2'")
            }
            #expect(filed == SQLIndexRows.readerSetText(["u9"]), "o2 is filed under a reader set that exists")
        }
    }

    @Test("a mutation whose result is in the table of schemas before v4 is answered with it")
    func legacyResults() async throws {
        try await SQLiteRowFieldsTests.withStorage(batch: 1000) { storage in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let old = try MutationID("old")
            let refusal = MutationResult.rejected(mutationId: old, error: RooftopError(.disallowed, "long ago"))
            try await storage.pool.write { db in
                try db.execute(
                    sql: "INSERT INTO mutations (scope, mutation_id, result, created_at) VALUES ('u1', 'old', ?, 0)",
                    arguments: [try DocumentCoding.encode(refusal)])
            }
            let outcome = try await storage.writeObjects { writer -> ObjectWriteOutcome in
                let request = ObjectWriteRequest(
                    datastoreKey: key, className: "T", objectId: "a", baseVersion: nil, mutation: ("u1", old))
                try writer.lock([request])
                return try writer.write(request) { _ in
                    StorageWrites.decision(StorageConformance.object("a"), deleted: false)
                }
            }
            guard case .replayed(let result) = outcome else {
                Issue.record("expected the recorded refusal, got \(outcome)")
                return
            }
            #expect(result == refusal)
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a") == nil)
        }
    }
}
