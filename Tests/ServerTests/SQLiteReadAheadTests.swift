import Foundation
import GRDB
import RooftopSQL
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// What the SQLite writer reads ahead for a push (``SQLiteObjectWriter/ReadAhead``) against what
/// its savepoints take back: the datastore's counters it keeps, and results recorded in the table
/// of schemas before v4. (``StorageConformance/readAhead(_:)`` covers what both backends share.)
@Suite struct SQLiteReadAheadTests {
    @Test("a write that fails after storing its object leaves no gap in the feed, no count, no reader set and no partition behind")
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
                // o1 and o2 are of class P, whose value-index partition o1 makes first.
                let requests = ids.enumerated().map { index, id in
                    ObjectWriteRequest(
                        datastoreKey: key, className: [1, 2].contains(index) ? "P" : "T", objectId: "o\(index)",
                        baseVersion: nil, mutation: ("u1", id))
                }
                try writer.lock(requests)
                let written = requests.map { request in
                    do {
                        // o1 makes the reader set of u9, which its savepoint takes back: o2 makes it again.
                        let acl = ["o1", "o2"].contains(request.objectId) ? StorageConformance.readable(by: .user("u9")) : nil
                        let outcome = try writer.write(request) { _ in
                            StorageWrites.decision(
                                StorageConformance.object(
                                    request.objectId, className: request.className, fields: ["n": 1], acl: acl),
                                deleted: false)
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
            #expect(try await storage.object(datastoreKey: key, className: "P", objectId: "o1") == nil)
            let byU9 = try await storage.find(Query("P"), datastoreKey: key, readers: ["u9"], limit: 10)
            #expect(byU9.objects.map(\.objectId) == ["o2"])
            let byValue = try await storage.find(
                Query(className: "P", predicate: .comparison(field: "n", op: .equal, value: 1)), datastoreKey: key,
                readers: ["*", "u9"], limit: 10)
            #expect(byValue.objects.map(\.objectId) == ["o2"], "o2's rows are in the partition of P")
            let misplaced = try await storage.pool.read { db in
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM object_fields f JOIN objects o ON o.key = f.object_key
                        LEFT JOIN object_partitions p ON p.key = f.partition
                        WHERE p.key IS NULL OR p.class_name != o.class_name
                        """)
            }
            #expect(misplaced == 0)
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

/// Conditions on the built-in fields the SQLite storage reads from its objects' columns use the
/// objects' own indexes (``SQLIndexLayout/serverSQLite``).
@Suite struct SQLiteBuiltInColumnTests {
    @Test("objectId conditions search the unique (datastore, class, objectId) index, not the class")
    func objectIdPlans() async throws {
        try await SQLiteRowFieldsTests.withStorage(batch: 1000) { storage in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            try await storage.saveClassSettings(ClassSettings(className: "T", indexes: [["a"]]))
            for index in 0..<50 {
                try await StorageWrites.put(
                    StorageConformance.object("o\(index)", fields: ["a": .int(Int64(index))]), datastoreKey: key,
                    into: storage)
            }
            var compiler = SQLQueryCompiler(dialect: .sqlite, layout: .serverSQLite)
            compiler.indexedFields = ["a"]
            let queries: [(String, [Value], [String])] = [
                ("where objectId = 'o7'", [], ["o7"]),
                ("where objectId in ?", [.list([.string("o3"), .string("o30"), .int(3)])], ["o3", "o30"]),
                // Bytewise: "o5" comes after "o47".
                ("where objectId >= 'o47' order by objectId", [], ["o47", "o48", "o49", "o5", "o6", "o7", "o8", "o9"]),
                (
                    "where objectId starts with 'o4' and objectId != 'o4' order by objectId desc", [],
                    (0..<10).reversed().map { "o4\($0)" }
                ),
            ]
            for (text, parameters, expected) in queries {
                let query = try Query.parse(className: "T", text: text, parameters: parameters)
                let select = compiler.select(query, scope: .datastore(key), readers: nil, limit: 10)
                let plan = try await storage.pool.read { db in
                    try Row.fetchAll(
                        db, sql: "EXPLAIN QUERY PLAN " + select.sql, arguments: SQLiteStorage.arguments(select.arguments)
                    ).map { $0["detail"] as String }
                }
                #expect(
                    plan.contains { $0.contains("SEARCH o USING INDEX sqlite_autoindex_objects_1") && $0.contains("object_id") },
                    "\(text): \(plan)")
                let page = try await storage.find(query, datastoreKey: key, readers: nil, limit: 10)
                #expect(page.objects.map(\.objectId) == expected, "\(text)")
            }
        }
    }

    @Test("a bound on keys, as a bound on a string or date column's values, compares exactly as the keys do")
    func columnBounds() throws {
        var rng = SeededGenerator(seed: 12)
        let alphabet: [UInt8] = Array("ab/+=.-_Zz09".utf8)
        func text(_ rng: inout SeededGenerator) -> [UInt8] {
            (0..<rng.int(0...4)).map { _ in rng.pick(alphabet) }
        }
        func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
            a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        }
        let operators: [QueryPredicate.ComparisonOperator] = [.less, .lessOrEqual, .equal, .greater, .greaterOrEqual]
        for _ in 0..<3_000 {
            // A string column: keys of other kinds, whole string keys (one with a 00 byte), and
            // the prefixes and successors `starts with` makes.
            let value = text(&rng)
            var bound = rng.pick([Value.int(3), .string(""), .bool(false), .bool(true)]).sortKey
            switch rng.int(0...3) {
            case 0: break
            case 1: bound = Value.string(String(decoding: text(&rng), as: UTF8.self)).sortKey
            case 2: bound = Value.string(String(decoding: text(&rng) + [0] + text(&rng), as: UTF8.self)).sortKey
            default:
                bound = Value.string(String(decoding: text(&rng), as: UTF8.self)).sortKey
                bound.removeLast(rng.int(1...2))
                if rng.chance(50), let next = SQLQueryCompiler.successor(of: bound) { bound = next }
            }
            let key = Value.string(String(decoding: value, as: UTF8.self)).sortKey
            let column = try #require(ColumnBound(bound, kind: .string))
            for op in operators {
                let expected: Bool =
                    switch op {
                    case .less: compare(key, bound) < 0
                    case .lessOrEqual: compare(key, bound) <= 0
                    case .equal: compare(key, bound) == 0
                    case .greater: compare(key, bound) > 0
                    default: compare(key, bound) >= 0
                    }
                let actual: Bool
                switch column.test(op) {
                case .every?: actual = true
                case .nothing?: actual = false
                case .compare(let sqlOperator, .blob(let other))?:
                    let order = compare(value, other)
                    actual = ["<": order < 0, "<=": order <= 0, "=": order == 0, ">": order > 0, ">=": order >= 0][sqlOperator] ?? false
                default:
                    Issue.record("no test for \(op) on \(bound)")
                    continue
                }
                #expect(actual == expected, "\(value) \(op) \(bound)")
            }
        }
        // A date column: whole date keys are its milliseconds; keys of other kinds bound all of them.
        let date = Timestamp(millisecondsSinceEpoch: -5)
        #expect(ColumnBound(Value.date(date).sortKey, kind: .date) == .value(.integer(-5), equal: 0))
        #expect(ColumnBound(Value.int(1).sortKey, kind: .date) == .everyAbove)
        #expect(ColumnBound(Value.string("x").sortKey, kind: .date) == .everyBelow)
        #expect(ColumnBound(Array(Value.date(date).sortKey.dropLast()), kind: .date) == nil)
    }
}
