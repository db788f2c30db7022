import GRDB

extension Database {
    /// Runs `body` in a savepoint of the transaction the caller holds: kept when `body` returns,
    /// rolled back (and `body`'s error thrown) when it throws — what GRDB's `inSavepoint` does
    /// inside a transaction, with its three statements prepared once per connection.
    ///
    /// GRDB prepares `SAVEPOINT` and `RELEASE` again at every call: a push runs one savepoint
    /// per mutation (each stays atomic on its own), and a group commit one per save, so those
    /// two compilations were a twentieth of a push's server time. Run through GRDB, the prepared
    /// statements still cost a twentieth more (its checks and bookkeeping around every
    /// statement), so they run as ``DirectStatement``s: GRDB does not see these savepoints,
    /// which only matters to its transaction observers, and like a direct statement this is for
    /// connections without any.
    ///
    /// ```swift
    /// try db.inPreparedSavepoint { try db.execute(sql: "INSERT INTO t VALUES (1)") }
    /// ```
    /// - Throws: `body`'s error (after the rollback), or SQLite's when the savepoint cannot be
    ///   opened, kept or rolled back; `SQLITE_MISUSE` outside a transaction. When SQLite rolled
    ///   the whole transaction back on its own (a full disk, say), `body`'s error is thrown and
    ///   nothing is left to roll back.
    package func inPreparedSavepoint<T>(_ body: () throws -> T) throws -> T {
        guard isInsideTransaction else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "a savepoint outside a transaction")
        }
        try DirectStatement(cachedStatement(sql: "SAVEPOINT rooftop")).execute { _ in }
        let result: T
        do {
            result = try body()
        } catch {
            if isInsideTransaction {
                // Rolling back to a savepoint leaves it open: it is released too.
                try DirectStatement(cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT rooftop")).execute { _ in }
                try DirectStatement(cachedStatement(sql: "RELEASE SAVEPOINT rooftop")).execute { _ in }
            }
            throw error
        }
        guard isInsideTransaction else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "the transaction was rolled back by SQLite")
        }
        try DirectStatement(cachedStatement(sql: "RELEASE SAVEPOINT rooftop")).execute { _ in }
        return result
    }
}
