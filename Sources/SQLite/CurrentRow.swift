import GRDB
import GRDBSQLite

/// The columns of the row a statement's cursor stands on, read by position straight from SQLite, for
/// the reads that go through every row of a page (a pull's objects): GRDB's `Row` subscripts
/// test each value's type through its generic conversions and make text with `String(cString:)`,
/// which measures it again with `strlen`; here text is copied once by the length SQLite gives.
/// Valid only until the cursor moves on.
///
/// ```swift
/// let statement = try db.cachedStatement(sql: "SELECT key, body FROM objects")
/// let cursor = try Row.fetchCursor(statement)
/// let row = CurrentRow(statement)
/// while try cursor.next() != nil {
///     let key = try row.int64(0)
/// }
/// ```
package struct CurrentRow {
    private let handle: OpaquePointer

    /// The row a cursor over `statement` stands on (after its `next()` returned one).
    package init(_ statement: Statement) {
        handle = statement.sqliteStatement
    }

    /// Whether the column is `NULL`.
    package func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// An integer.
    /// - Throws: `DatabaseError` (`SQLITE_MISMATCH`) for `NULL` (a damaged row: GRDB's reads trapped).
    package func int64(_ column: Int32) throws -> Int64 {
        guard !isNull(column) else { throw Self.null(column) }
        return sqlite3_column_int64(handle, column)
    }

    /// An integer, or `nil` for `NULL`.
    package func optionalInt64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : sqlite3_column_int64(handle, column)
    }

    /// Text, its bytes read as UTF-8 (invalid sequences repaired, as Swift's strings do).
    /// - Throws: `DatabaseError` (`SQLITE_MISMATCH`) for `NULL`, `SQLITE_NOMEM` when SQLite cannot
    ///   give the text.
    package func text(_ column: Int32) throws -> String {
        guard !isNull(column) else { throw Self.null(column) }
        guard let start = sqlite3_column_text(handle, column) else {
            throw DatabaseError(resultCode: .SQLITE_NOMEM, message: "column \(column)'s text could not be read")
        }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    /// Text, or `nil` for `NULL`.
    /// - Throws: As ``text(_:)``.
    package func optionalText(_ column: Int32) throws -> String? {
        isNull(column) ? nil : try text(column)
    }

    private static func null(_ column: Int32) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_MISMATCH, message: "column \(column) is NULL where a value is required")
    }
}
