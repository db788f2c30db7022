import Foundation
import GRDB
import RooftopSQLite
import Testing

/// Statements bound straight to SQLite (`DirectStatement`), the write path of every pulled
/// object's rows: each kind of value must land as GRDB would bind it (empty text and blobs are
/// values, not `NULL`), a wrong number of values or a failing step must throw and leave the
/// statement usable, and GRDB must still run the same cached statement afterwards.
@Suite("Directly bound statements")
struct DirectStatementTests {
    private func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, b INTEGER, s TEXT, blob BLOB, r REAL, UNIQUE (s))")
        }
        return queue
    }

    private static let insert = "INSERT INTO t (i, b, s, blob, r) VALUES (?, ?, ?, ?, ?) RETURNING id"

    @Test("every kind of value is stored as GRDB binds it, empty text and blobs included")
    func binds() throws {
        let queue = try database()
        try queue.write { db in
            let insert = DirectStatement(try db.cachedStatement(sql: DirectStatementTests.insert))
            let cases: [(Int64, Bool, String?, [UInt8]?, Double?)] = [
                (Int64.min, true, "héllo \u{1F600}", [0, 1, 255], -0.5),
                (Int64.max, false, "", [], nil),
                (0, false, nil, nil, Double.greatestFiniteMagnitude),
            ]
            var ids: [Int64] = []
            for (integer, flag, text, blob, real) in cases {
                let id = try insert.fetchInteger { values in
                    values.bind(integer)
                    values.bind(flag)
                    values.bind(text)
                    values.bind(blob)
                    values.bind(real)
                }
                ids.append(try #require(id))
            }
            #expect(ids == [1, 2, 3])
            let rows = try Row.fetchAll(db, sql: "SELECT i, b, s, blob, r, typeof(s) AS ts, typeof(blob) AS tb FROM t ORDER BY id")
            #expect(rows.count == 3)
            for (row, expected) in zip(rows, cases) {
                #expect(row["i"] as Int64 == expected.0)
                #expect(row["b"] as Bool == expected.1)
                #expect(row["s"] as String? == expected.2)
                #expect((row["blob"] as Data?).map { [UInt8]($0) } == expected.3)
                #expect(row["r"] as Double? == expected.4)
            }
            // Empty values are values: text and a blob, never NULL.
            #expect(rows[1]["ts"] as String == "text")
            #expect(rows[1]["tb"] as String == "blob")
            #expect(rows[2]["ts"] as String == "null")
            // The same values bound by GRDB read back identically, text with a NUL included (GRDB
            // binds a string up to its first NUL, and so does a direct statement).
            for (integer, flag, text, blob, real) in cases + [(7, true, "a\u{0}b", [0], 0)] {
                let direct = try insert.fetchInteger { values in
                    values.bind(integer)
                    values.bind(flag)
                    values.bind(text.map { "direct/" + $0 })
                    values.bind(blob)
                    values.bind(real)
                }
                let viaGRDB = try Int64.fetchOne(
                    db.cachedStatement(sql: DirectStatementTests.insert),
                    arguments: [integer, flag, text.map { "grdb/" + $0 }, blob.map { Data($0) }, real])
                let read = { (id: Int64?) in
                    try Row.fetchOne(db, sql: "SELECT i, b, s, hex(blob) AS h, typeof(blob) AS tb, r FROM t WHERE id = ?", arguments: [id])
                }
                let (one, other) = (try read(direct), try read(viaGRDB))
                #expect(one?["i"] as Int64? == other?["i"] && one?["b"] as Int64? == other?["b"])
                #expect(one?["h"] as String? == other?["h"] && one?["tb"] as String? == other?["tb"])
                #expect(one?["r"] as Double? == other?["r"])
                #expect(
                    (one?["s"] as String?).map { $0.dropFirst("direct/".count) }
                        == (other?["s"] as String?).map { $0.dropFirst("grdb/".count) })
            }
        }
    }

    @Test("outside a transaction, or with too many values, a direct statement throws and writes nothing")
    func refusals() throws {
        let queue = try database()
        let statement = try queue.inDatabase { db in try db.makeStatement(sql: DirectStatementTests.insert) }
        try queue.inDatabase { db in
            // No transaction: each statement would commit on its own (after SQLite rolled one back, say).
            #expect(throws: DatabaseError.self) {
                try DirectStatement(statement).execute { values in
                    values.bind(Int64(1))
                    values.bind(true)
                    values.bind("alone")
                    values.bind([UInt8]?.none)
                    values.bind(Double?.none)
                }
            }
        }
        try queue.write { db in
            let insert = DirectStatement(try db.cachedStatement(sql: DirectStatementTests.insert))
            #expect(throws: DatabaseError.self) {
                try insert.execute { values in
                    for _ in 0..<6 { values.bind(Int64(1)) }
                }
            }
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 0)
    }

    @Test("a lookup asked to run alone runs outside a transaction; other statements, and lookups not asked to, do not")
    func lookupAlone() throws {
        let queue = try database()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO t (i, b, s, blob, r) VALUES (7, 1, 'seven', NULL, NULL)")
        }
        try queue.inDatabase { db in
            #expect(!db.isInsideTransaction)
            let lookup = DirectStatement(try db.cachedStatement(sql: "SELECT i, s FROM t WHERE s = ?"))
            let found = try lookup.fetchFirst(alone: true, { $0.bind("seven") }) { columns in
                (columns.int64(0), try columns.text(1))
            }
            #expect(found?.0 == 7 && found?.1 == "seven")
            #expect(try lookup.fetchFirst(alone: true, { $0.bind("none") }) { $0.int64(0) } == nil)
            #expect(!db.isInsideTransaction)
            // Only when asked for: a lookup outside a transaction throws otherwise.
            #expect(throws: DatabaseError.self) { try lookup.fetchFirst({ $0.bind("seven") }) { $0.int64(0) } }
            // Statements that SQLite counts as writing nothing but that return no rows are no
            // lookups: they would open a transaction GRDB does not know of.
            for sql in ["BEGIN", "SAVEPOINT alone"] {
                #expect(throws: DatabaseError.self) {
                    try DirectStatement(db.makeStatement(sql: sql)).fetchFirst(alone: true, { _ in }) { $0.int64(0) }
                }
                #expect(!db.isInsideTransaction)
            }
        }
    }

    @Test("too few values, or a failing step, throw with SQLite's code and leave the statement usable")
    func failures() throws {
        let queue = try database()
        try queue.write { db in
            let statement = try db.cachedStatement(sql: DirectStatementTests.insert)
            let insert = DirectStatement(statement)
            #expect(throws: DatabaseError.self) {
                try insert.execute { values in
                    values.bind(Int64(1))
                    values.bind(true)
                }
            }
            try insert.execute { values in
                values.bind(Int64(1))
                values.bind(true)
                values.bind("taken")
                values.bind([UInt8]?.none)
                values.bind(Double?.none)
            }
            do {
                try insert.execute { values in
                    values.bind(Int64(2))
                    values.bind(false)
                    values.bind("taken")
                    values.bind([UInt8]?.none)
                    values.bind(Double?.none)
                }
                Issue.record("a unique constraint violation did not throw")
            } catch let error as DatabaseError {
                #expect(error.resultCode == .SQLITE_CONSTRAINT)
            }
            // No binding is left behind, and GRDB runs the same cached statement as before.
            #expect(try Int64.fetchOne(statement, arguments: [3, false, "other", nil, nil]) == 2)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 2)
            #expect(
                try DirectStatement(db.cachedStatement(sql: "SELECT id FROM t WHERE s = ?")).fetchInteger { $0.bind("none") }
                    == nil)
        }
    }

    @Test("a row read straight from SQLite: values as GRDB reads them, a NULL where one is required throws")
    func currentRows() throws {
        let queue = try database()
        try queue.write { db in
            try db.execute(
                sql: "INSERT INTO t (i, b, s, blob, r) VALUES (?, 1, ?, NULL, NULL), (NULL, 0, NULL, NULL, NULL)",
                arguments: [Int64.min, "héllo \u{1F600} \"quoted\""])
            let statement = try db.makeStatement(sql: "SELECT i, s FROM t ORDER BY id")
            let cursor = try Row.fetchCursor(statement)
            let row = CurrentRow(statement)
            var read: [(Int64?, String?)] = []
            while let grdb = try cursor.next() {
                #expect(row.optionalInt64(0) == grdb[0] as Int64?)
                #expect(try row.optionalText(1) == grdb[1] as String?)
                read.append((row.optionalInt64(0), try row.optionalText(1)))
                if row.isNull(0) {
                    #expect(throws: DatabaseError.self) { try row.int64(0) }
                    #expect(throws: DatabaseError.self) { try row.text(1) }
                } else {
                    #expect(try row.int64(0) == Int64.min)
                    #expect(try row.text(1) == "héllo \u{1F600} \"quoted\"")
                }
            }
            #expect(read.count == 2)
        }
    }
}
