import GRDB
import GRDBSQLite

extension RooftopSQLite {
    /// How many virtual-machine instructions SQLite runs between two checks of a bound
    /// (``bounded(_:instructions:_:)``).
    static let instructionsPerCheck: Int32 = 1_000

    /// Runs `body`'s statements on `db` for at most about `instructions` instructions of SQLite's
    /// virtual machine (checked every ``instructionsPerCheck``): past them the running statement is
    /// interrupted and the answer is `nil`. A statement interrupted so reads nothing more, and the
    /// read transaction it ran in stays open (a `SELECT` changes nothing to roll back): the
    /// caller can read the same snapshot another way. An instruction is SQLite's unit of work
    /// (a row read from an index, a comparison), so a bound in instructions bounds the rows read.
    ///
    /// ```swift
    /// // A walk that may read far more rows than its estimate: give up, and read otherwise.
    /// let rows = try RooftopSQLite.bounded(db, instructions: 20 * expectedRows) { try Row.fetchAll(db, sql: walk) }
    ///     ?? Row.fetchAll(db, sql: matchesFirst)
    /// ```
    /// - Throws: What `body` throws, but the interruption the bound causes; a cancellation
    ///   (`CancellationError`, GRDB's interruption of a cancelled task) passes through.
    package static func bounded<T>(_ db: Database, instructions: Int, _ body: () throws -> T) throws -> T? {
        guard let connection = db.sqliteConnection else { return try body() }
        // The checks left: decremented by SQLite's callback, on this thread, while `body` runs.
        let checks = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        checks.initialize(to: max(instructions / Int(instructionsPerCheck), 1))
        defer { checks.deallocate() }
        sqlite3_progress_handler(
            connection, instructionsPerCheck,
            { context in
                guard let left = context?.assumingMemoryBound(to: Int.self) else { return 0 }
                left.pointee -= 1
                return left.pointee < 0 ? 1 : 0
            }, checks)
        defer { sqlite3_progress_handler(connection, 0, nil, nil) }
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT && checks.pointee < 0 {
            return nil
        }
    }
}
