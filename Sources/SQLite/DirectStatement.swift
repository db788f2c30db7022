import GRDB
import GRDBSQLite
import RooftopSQL

/// Runs a prepared statement with its parameters bound straight to SQLite, for the statements a
/// write path runs thousands of times per transaction (the rows of every object a pull stores).
///
/// GRDB's `execute(arguments:)` boxes each value in an existential, validates the arguments
/// against the statement, clears the bindings twice and records the statement's region for
/// observation: in an initial sync that was a quarter of the client's time, more than SQLite's
/// own work on the rows. A direct statement binds typed values in order (strings and blobs are
/// copied by SQLite), steps, and resets the statement, leaving no binding behind. It skips GRDB's
/// bookkeeping around a statement, so it is only for `INSERT`, `UPDATE`, `DELETE` and lookups
/// inside a transaction the caller holds, or a lookup the caller asks to run alone
/// (``fetchFirst(alone:_:_:)``; it throws outside a transaction otherwise; never `BEGIN`, `COMMIT` or schema
/// changes, which GRDB must see; savepoints only as ``GRDB/Database/inPreparedSavepoint(_:)``
/// opens and closes them), on a connection without GRDB transaction observers.
///
/// ```swift
/// let insert = try DirectStatement(db.cachedStatement(sql: "INSERT INTO t (a, b) VALUES (?, ?)"))
/// try insert.execute { $0.bind(Int64(1)); $0.bind("one") }
/// ```
package struct DirectStatement {
    /// The GRDB statement whose SQLite statement this runs (kept alive by it, and by GRDB's cache).
    private let statement: Statement

    /// A direct statement over a prepared (usually cached) GRDB statement.
    package init(_ statement: Statement) {
        self.statement = statement
    }

    /// Binds parameters in order, from the first.
    package struct Binder {
        fileprivate let handle: SQLiteStatement
        fileprivate var index: CInt = 0
        /// The first failed binding's code (a parameter past the statement's count).
        fileprivate var failure: CInt = SQLITE_OK

        /// Moves to the next parameter.
        private mutating func advance() -> CInt {
            index += 1
            return index
        }

        /// Keeps the first failed binding's code.
        private mutating func record(_ code: CInt) {
            if code != SQLITE_OK, failure == SQLITE_OK { failure = code }
        }

        /// Binds an integer.
        package mutating func bind(_ value: Int64) {
            let code = sqlite3_bind_int64(handle, advance(), value)
            record(code)
        }

        /// Binds an integer, or `NULL`.
        package mutating func bind(_ value: Int64?) {
            guard let value else { return record(sqlite3_bind_null(handle, advance())) }
            bind(value)
        }

        /// Binds a Boolean as 0 or 1.
        package mutating func bind(_ value: Bool) {
            bind(Int64(value ? 1 : 0))
        }

        /// Binds text (copied by SQLite), or `NULL`.
        package mutating func bind(_ value: String?) {
            let index = advance()
            let handle = handle
            guard var value else { return record(sqlite3_bind_null(handle, index)) }
            let code = value.withUTF8 { text in
                // SQLite reads a null pointer as `NULL`: empty text points at a static empty string.
                let start = text.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(emptyText.utf8Start)
                // As GRDB binds a string (a C string): up to its first NUL, so that a value written
                // here matches the same value bound by GRDB in a query.
                let length = text.firstIndex(of: 0) ?? text.count
                return sqlite3_bind_text64(
                    handle, index, start.assumingMemoryBound(to: CChar.self), sqlite3_uint64(length),
                    transientDestructor, UInt8(SQLITE_UTF8))
            }
            record(code)
        }

        /// Binds a blob (copied by SQLite), or `NULL`.
        package mutating func bind(_ value: [UInt8]?) {
            let index = advance()
            let handle = handle
            guard let value else { return record(sqlite3_bind_null(handle, index)) }
            let code = value.withUnsafeBytes { bytes in
                // SQLite reads a null pointer as `NULL`: an empty blob is bound as one.
                guard let start = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
                return sqlite3_bind_blob64(handle, index, start, sqlite3_uint64(bytes.count), transientDestructor)
            }
            record(code)
        }

        /// Binds a real, or `NULL`.
        package mutating func bind(_ value: Double?) {
            let index = advance()
            guard let value else { return record(sqlite3_bind_null(handle, index)) }
            let code = sqlite3_bind_double(handle, index, value)
            record(code)
        }
    }

    /// Runs the statement to its end with the parameters `bind` binds.
    /// - Throws: `DatabaseError` with SQLite's code and message when a binding or a step fails.
    package func execute(_ bind: (inout Binder) -> Void) throws {
        try run(bind)
    }

    /// Runs the statement with the parameters `bind` binds and returns the first column of its
    /// first row as an integer (`nil` when it returns no row or `NULL`): an `INSERT … RETURNING`,
    /// a lookup of a key.
    /// - Throws: `DatabaseError` with SQLite's code and message when a binding or a step fails.
    package func fetchInteger(_ bind: (inout Binder) -> Void) throws -> Int64? {
        var first: Int64?
        try run(bind) { first = $0.int64(0) }
        return first
    }

    /// Runs the statement with the parameters `bind` binds and reads its first row with `read`
    /// (`nil` when it returns no row): a lookup of one row, without GRDB's `Row`.
    /// - Parameter alone: The statement may run outside a transaction (default `false`): a query
    ///   that writes nothing reads one snapshot on its own and commits nothing (a point read on a
    ///   connection of its own). Anything else still throws there.
    /// - Throws: `DatabaseError` with SQLite's code and message when a binding or a step fails;
    ///   what `read` throws.
    package func fetchFirst<T>(alone: Bool = false, _ bind: (inout Binder) -> Void, _ read: (Columns) throws -> T)
        throws -> T?
    {
        var first: T?
        try run(bind, alone: alone) { first = try read($0) }
        return first
    }

    /// Runs the statement with the parameters `bind` binds and reads every row with `read`, in
    /// order: a lookup of a few rows (an object's queued changes), without GRDB's `Row`.
    /// - Throws: `DatabaseError` with SQLite's code and message when a binding or a step fails;
    ///   what `read` throws.
    package func fetchAll<T>(_ bind: (inout Binder) -> Void, _ read: (Columns) throws -> T) throws -> [T] {
        var rows: [T] = []
        try run(bind, everyRow: true) { rows.append(try read($0)) }
        return rows
    }

    /// The columns of the row a statement is on (valid during the call that receives them).
    package struct Columns {
        fileprivate let handle: SQLiteStatement

        /// Column `index` as an integer (`nil` for `NULL`).
        package func int64(_ index: CInt) -> Int64? {
            sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
        }

        /// Column `index` as text (`nil` for `NULL`): its UTF-8 bytes as SQLite holds them.
        /// - Throws: `DatabaseError` (`SQLITE_NOMEM`) when SQLite could not give the text.
        package func text(_ index: CInt) throws -> String? {
            guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
            guard let start = sqlite3_column_text(handle, index) else {
                throw DatabaseError(resultCode: .SQLITE_NOMEM, message: "SQLite could not give a column's text")
            }
            let count = Int(sqlite3_column_bytes(handle, index))
            return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
        }
    }

    /// Steps the statement to its end; `onRow` reads the first row (every row: `everyRow`).
    /// `alone`: a query that writes nothing may run outside a transaction.
    private func run(
        _ bind: (inout Binder) -> Void, alone: Bool = false, everyRow: Bool = false,
        onFirstRow onRow: (Columns) throws -> Void = { _ in }
    ) throws {
        let handle = statement.sqliteStatement
        // Whatever happens, the statement is left reset and without bindings for its next use.
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        let connection = sqlite3_db_handle(handle)
        // Only inside a transaction: after an error that made SQLite roll it back, GRDB refuses to
        // run statements until the caller ends it, and so does this (they would each commit, or
        // read past what the transaction wrote). Unless the caller asks for a lookup alone: a
        // query (it returns columns) that writes nothing — not `BEGIN`, `SAVEPOINT` or a pragma,
        // which SQLite also counts as writing nothing — reads one snapshot and commits nothing.
        let isLookupAlone = alone && sqlite3_stmt_readonly(handle) != 0 && sqlite3_column_count(handle) > 0
        guard let connection, sqlite3_get_autocommit(connection) == 0 || isLookupAlone else {
            throw DatabaseError(
                resultCode: .SQLITE_ABORT, message: "a direct statement runs only inside a transaction", sql: statement.sql)
        }
        var binder = Binder(handle: handle)
        bind(&binder)
        guard binder.failure == SQLITE_OK else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: binder.failure), message: String(cString: sqlite3_errmsg(connection)),
                sql: statement.sql)
        }
        guard binder.index == sqlite3_bind_parameter_count(handle) else {
            throw DatabaseError(
                resultCode: .SQLITE_RANGE,
                message: "\(binder.index) values bound to \(sqlite3_bind_parameter_count(handle)) parameters",
                sql: statement.sql)
        }
        var isFirst = true
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE:
                return
            case SQLITE_ROW:
                // Every row is stepped through: an `INSERT … RETURNING` writes as it steps.
                if isFirst || everyRow { try onRow(Columns(handle: handle)) }
                isFirst = false
            case let code:
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)),
                    sql: statement.sql)
            }
        }
    }
}

/// An empty C string, for empty text.
private let emptyText: StaticString = ""

/// SQLite's `SQLITE_TRANSIENT`: the value bound is copied before the binding call returns.
private let transientDestructor = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

extension DirectStatement.Binder {
    /// Binds the columns an `object_fields` row starts with in both stores, in their order:
    /// `object_key, field, kind, sort_key, latitude, longitude`.
    package mutating func bind(_ row: SQLIndexRows.FieldRow, of objectKey: Int64) {
        bind(objectKey)
        bind(row.field)
        bind(row.kind)
        bind(row.sortKey)
        bind(row.latitude)
        bind(row.longitude)
    }
}
