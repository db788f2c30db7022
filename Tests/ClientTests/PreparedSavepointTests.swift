import Foundation
import GRDB
import RooftopSQLite
import Testing

/// Savepoints with their statements prepared once (`Database.inPreparedSavepoint`), one per
/// mutation of a server's push and per save of a client's group commit: each keeps or undoes its
/// own writes alone, nests, refuses to run outside a transaction, and reports a transaction that
/// SQLite rolled back on its own.
@Suite("Prepared savepoints")
struct PreparedSavepointTests {
    private struct Injected: Error {}

    private func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (n INTEGER PRIMARY KEY)") }
        return queue
    }

    private func stored(_ queue: DatabaseQueue) throws -> [Int] {
        try queue.read { db in try Int.fetchAll(db, sql: "SELECT n FROM t ORDER BY n") }
    }

    @Test("each savepoint keeps its writes or undoes them alone; the transaction commits the kept ones")
    func keepsAndUndoes() throws {
        let queue = try database()
        let outcomes = try queue.write { db -> [Bool] in
            (1...6).map { n in
                do {
                    try db.inPreparedSavepoint {
                        try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [n * 10])
                        try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [n * 10 + 1])
                        if n.isMultiple(of: 3) { throw Injected() }
                    }
                    return true
                } catch {
                    return error is Injected ? false : true
                }
            }
        }
        #expect(outcomes == [true, true, false, true, true, false])
        #expect(try stored(queue) == [10, 11, 20, 21, 40, 41, 50, 51])
    }

    @Test("a savepoint returns its body's value, nests in another, and a failed inner one leaves the outer's writes")
    func nests() throws {
        let queue = try database()
        let value = try queue.write { db in
            try db.inPreparedSavepoint { () throws -> String in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                #expect(throws: Injected.self) {
                    try db.inPreparedSavepoint {
                        try db.execute(sql: "INSERT INTO t VALUES (2)")
                        throw Injected()
                    }
                }
                try db.inPreparedSavepoint { try db.execute(sql: "INSERT INTO t VALUES (3)") }
                return "outer"
            }
        }
        #expect(value == "outer")
        #expect(try stored(queue) == [1, 3])
        // An outer savepoint that fails after a failed inner one undoes its own writes too (the
        // inner one was released when it rolled back, not left to catch the outer's rollback).
        let innerFailed = try queue.write { db -> Bool in
            var innerFailed = false
            #expect(throws: Injected.self) {
                try db.inPreparedSavepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (4)")
                    do {
                        try db.inPreparedSavepoint {
                            try db.execute(sql: "INSERT INTO t VALUES (5)")
                            throw Injected()
                        }
                    } catch is Injected {
                        innerFailed = true
                    }
                    try db.execute(sql: "INSERT INTO t VALUES (6)")
                    throw Injected()
                }
            }
            return innerFailed
        }
        #expect(innerFailed)
        #expect(try stored(queue) == [1, 3])
    }

    @Test("a constraint failure inside undoes the savepoint's earlier writes; outside a transaction it refuses to run")
    func failuresAndMisuse() throws {
        let queue = try database()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO t VALUES (7)")
            #expect(throws: DatabaseError.self) {
                try db.inPreparedSavepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (8)")
                    try db.execute(sql: "INSERT INTO t VALUES (7)")
                }
            }
            #expect(db.isInsideTransaction)
        }
        #expect(try stored(queue) == [7])
        try queue.writeWithoutTransaction { db in
            #expect {
                try db.inPreparedSavepoint { try db.execute(sql: "INSERT INTO t VALUES (9)") }
            } throws: { error in
                (error as? DatabaseError)?.resultCode == .SQLITE_MISUSE
            }
        }
        #expect(try stored(queue) == [7])
    }

    @Test("a body that ends the whole transaction is reported, not released")
    func transactionEnded() throws {
        let queue = try database()
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN")
            #expect {
                try db.inPreparedSavepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (5)")
                    try db.execute(sql: "ROLLBACK")
                }
            } throws: { error in
                (error as? DatabaseError)?.resultCode == .SQLITE_ABORT
                    && (error as? DatabaseError)?.message == "the transaction was rolled back by SQLite"
            }
            #expect(!db.isInsideTransaction)
        }
        #expect(try stored(queue) == [])
    }
}
