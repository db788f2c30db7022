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
        try run("SAVEPOINT rooftop")
        let result: T
        do {
            result = try body()
        } catch {
            if isInsideTransaction {
                // Rolling back to a savepoint leaves it open: it is released too.
                try endingTheTransactionOnFailure {
                    try run("ROLLBACK TRANSACTION TO SAVEPOINT rooftop")
                    try run("RELEASE SAVEPOINT rooftop")
                }
            }
            throw error
        }
        guard isInsideTransaction else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "the transaction was rolled back by SQLite")
        }
        try endingTheTransactionOnFailure { try run("RELEASE SAVEPOINT rooftop") }
        return result
    }

    private func run(_ sql: String) throws {
        try DirectStatement(cachedStatement(sql: sql)).execute { _ in }
    }

    /// Runs `statements`; if they fail inside the transaction, rolls the whole transaction back
    /// (through GRDB, which then fails the caller's transaction with `SQLITE_ABORT`): a savepoint
    /// that could be neither kept nor undone must not leave its writes to be committed.
    private func endingTheTransactionOnFailure(_ statements: () throws -> Void) throws {
        do {
            try statements()
        } catch {
            if isInsideTransaction { try rollback() }
            throw error
        }
    }
}
