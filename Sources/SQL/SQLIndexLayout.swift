import RooftopShared

/// The tables a store keeps for queries, as ``SQLQueryCompiler`` reads them: one layout for the
/// client's local store and the server's storage, so that both answer a query with the same SQL.
///
/// Every store has:
/// - `objects o`: one row per object, with an integer `key`, `class_name`, `object_id` and the
///   tombstone flag that ``SQLDialect/live`` tests;
/// - `object_fields(object_key, field, kind, sort_key, latitude, longitude)`: one row per field
///   of a live object (per value-indexed field in a store with a ``document``), `sort_key` its
///   value's order-preserving key (``Value/sortKey``) or `NULL` past ``Value/indexedKeyLimit``,
///   the coordinates for points, indexed on `(field, sort_key)`;
/// - `object_elements(object_key, field, element_key)`: one row per element of a list or relation;
/// - who may read each object (`*`, user IDs, `role:Name`), from its ACL (``Readers``): rows of
///   `object_readers(object_key, principal, …)` per object, or the object's reader set.
///
/// What differs between stores is what a page selects and how it is scoped:
///
/// ```swift
/// let layout = SQLIndexLayout(
///     source: "objects o", columns: "o.key, o.body", readers: .perObject(current: nil))
/// let compiler = SQLQueryCompiler(dialect: .sqlite, layout: layout)
/// ```
package struct SQLIndexLayout: Sendable {
    /// What a page selects from: `objects o`, joined with what ``columns`` needs.
    package var source: String
    /// The columns of a page's rows, in the order the store reads them.
    package var columns: String
    /// How the store keeps who may read each object.
    package var readers: Readers
    /// The column of `object_fields` and `object_elements` that is 1 for the rows in the value
    /// indexes (partial indexes on `(field, sort_key)` and `(field, element_key)` of the rows where
    /// it is 1: the fields a class's declared indexes name, or every field of a class that
    /// declares none); `nil` when the value indexes hold every row.
    package var valueFlag: String?
    /// The SQL of an object's stored JSON document (an ``ObjectSnapshot``), for a store that keeps
    /// rows only of the fields in its value indexes (the fields a class's declared indexes name,
    /// or every field of a class that declares none); `nil` when it keeps every field's rows.
    /// Conditions and orders on a field without rows read its value from the document with the
    /// functions the SQLite storage registers (`RooftopSQLite.registerFunctions`).
    package var document: String?
    /// The built-in fields a store reads from its objects' own columns rather than from rows
    /// (the server's storage: `objectId` always; on SQLite `createdAt` and `updatedAt` too when
    /// the class's rows leave them out, ``SQLQueryCompiler/indexedFields``), by name.
    package var builtInColumns: [String: BuiltInColumn] = [:]

    /// A built-in field held in a column of `objects o`, compared as a column where that says a
    /// test exactly, else through its key (``SQLDialect/builtInKey``).
    package struct BuiltInColumn: Sendable {
        /// The kind of every value of the column.
        package var kind: Value.Kind
        /// The column's SQL (`o.object_id`).
        package var column: String
        /// Whether the store never keeps the field's rows (else only when the class's rows leave
        /// it out).
        package var always: Bool
        /// Whether the column may be `NULL` (the object then lacks the field).
        package var nullable: Bool

        /// A column: of strings without a `00` byte, compared bytewise, or of dates as
        /// milliseconds since the epoch (``SQLQueryCompiler``'s built-in tests, SQLite's text).
        package init(kind: Value.Kind, column: String, always: Bool, nullable: Bool) {
            self.kind = kind
            self.column = column
            self.always = always
            self.nullable = nullable
        }
    }

    /// How a store keeps who may read each object.
    package enum Readers: Sendable {
        /// An `object_readers(object_key, principal)` row per object and principal; `current`: the
        /// condition that a row (`r`) is current, for a store that keeps readers' history (the
        /// server's `r.to_sequence IS NULL`), `nil` when every row is current.
        case perObject(current: String?)
        /// Reader sets, each stored once however many objects share it: `o.readers` is the key of
        /// the object's set, `reader_set_members(reader_set, principal)` its principals, indexed
        /// by principal (the client's local store: a pulled page's objects share a few ACLs, and
        /// a row per object and principal was an eighth of an initial sync's writes).
        case sets
        /// Reader sets as in ``sets``, and `object_readers(object_key, principal)` rows for the
        /// readers a set does not name (``SQLIndexRows/readersBeyondSet(_:)``; `current`: the
        /// condition that a row is current), read only for a caller who does not hold `*` (the
        /// server's storage on both backends: its readers' history keeps no row a set tells).
        case setsAndRows(current: String)
    }

    /// A layout.
    package init(
        source: String, columns: String, readers: Readers, valueFlag: String? = nil, document: String? = nil
    ) {
        self.source = source
        self.columns = columns
        self.readers = readers
        self.valueFlag = valueFlag
        self.document = document
    }
}
