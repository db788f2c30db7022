import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared

/// The local index, in the layout the server's storage has too (``SQLIndexLayout``): for every
/// stored object that is not deleted, one `object_fields` row per value-indexed field of its
/// local view (``valueIndexedFields(of:_:)``: the fields its class's declared indexes name, or
/// every field, built-in ones included, of a class that declares none) with the value's
/// order-preserving key, and `object_elements` rows for their list elements and relation members
/// (who may read it is the objects row's reader set, ``readerSet(_:)``). Rows are computed by ``SQLIndexRows``, the
/// server's code; local queries compile to SQL over them with the server's ``SQLQueryCompiler``,
/// which reads the other fields from the object's document (``SQLIndexLayout/document``).
///
/// A value the index does not fully store (a key longer than `Value.indexedKeyLimit`) has its
/// row marked incomplete: queries on that field let the shared evaluator decide.
extension StoreTransaction {
    /// Replaces an object's index rows with those of its local view (none when `nil`).
    func indexFields(_ key: ObjectKey, local: ObjectSnapshot?) throws {
        // Its entries may go: the counts summed so far are written first.
        try entries.flushCounts(db)
        guard let objectKey = try StoreTransaction.objectKey(key, scope: scope, db) else { return }
        try StoreTransaction.index(
            objectKey: objectKey, local: local, replacing: true, indexed: try local.map { try valueIndexedFields(of: $0.className) },
            leading: try local.map { try leadingFields(of: $0.className) }, db)
    }

    /// The fields of `className` in the value indexes (``valueIndexedFields(of:_:)``), read once
    /// per transaction: a pulled page writes hundreds of objects of one class. Declarations change
    /// in transactions of their own (``LocalStore/declareIndexes(_:of:)``), which forget them.
    func valueIndexedFields(of className: String) throws -> Set<String>? {
        if let known = indexedFieldsRead[className] { return known }
        let fields = try StoreTransaction.valueIndexedFields(of: className, db)
        indexedFieldsRead[className] = .some(fields)
        return fields
    }

    /// The fields of `className` that lead a declared index (``leadingFields(of:_:)``), read once
    /// per transaction.
    func leadingFields(of className: String) throws -> Set<String> {
        if let known = leadingFieldsRead[className] { return known }
        let fields = try StoreTransaction.leadingFields(of: className, db)
        leadingFieldsRead[className] = fields
        return fields
    }

    /// Forgets the value-indexed fields and the partitions read so far (after a declaration
    /// changed them).
    func forgetValueIndexedFields() {
        indexedFieldsRead = [:]
        leadingFieldsRead = [:]
        entries.forgetPartitions()
    }

    /// Removes the index rows of a datastore's objects (before the objects go).
    func removeFieldIndex(of datastore: DatastoreID) throws {
        try removeIndexRows(where: "SELECT key FROM objects WHERE scope = ? AND datastore = ?", [scope, datastore.rawValue])
        // A bulk load of it ends with it.
        try db.execute(
            sql: "DELETE FROM bulk_loads WHERE scope = ? AND datastore = ?", arguments: [scope, datastore.rawValue])
    }

    /// Deletes the index rows of the objects whose keys `select` returns, after writing the counts
    /// summed so far (their entries may be among those going).
    func removeIndexRows(where select: String, _ arguments: StatementArguments) throws {
        try entries.flushCounts(db)
        try StoreTransaction.removeIndexRows(where: select, arguments, db)
    }

    /// The integer key of an object's row.
    static func objectKey(_ key: ObjectKey, scope: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(
                sql: "SELECT key FROM objects WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id = ?"),
            arguments: [scope, key.datastore.rawValue, key.className, key.objectId])
    }

    /// Deletes the index rows of the objects whose keys `select` returns.
    static func removeIndexRows(where select: String, _ arguments: StatementArguments, _ db: Database) throws {
        for table in StoreTransaction.indexTables {
            try db.execute(sql: "DELETE FROM \(table) WHERE object_key IN (\(select))", arguments: arguments)
        }
    }

    /// Writes the index rows of the object with row key `objectKey` for its local view `local`,
    /// through statements bound directly (``DirectStatement``): an initial sync runs them for
    /// every field of every object.
    /// - Parameters:
    ///   - indexed: The fields of the object's class in the value indexes, when the caller has
    ///     read them (``valueIndexedFields(of:)``); read here otherwise.
    ///   - declared: Writes the entries of declared indexes and the rows' value flags too
    ///     (`false` only for migrations older than those).
    ///   - prepared: `local`'s rows, worked out before the transaction (``PreparedObject``).
    ///   - entries: Writes the declared indexes' entries from the rows (``IndexEntryWriter``);
    ///     without it they are made from the stored rows by SQL.
    ///   - bulkLoads: Whether the store has bulk loads (`false` only for a store older than v17,
    ///     ``StoreTransaction/indexEntries(where:_:counts:bulkLoads:ordered:_:)``).
    ///   - previous: The local view the object's stored rows were made from, when the caller read
    ///     it in this transaction (only the rows of the fields that differ are then rewritten,
    ///     ``update(objectKey:local:previous:flags:entries:_:)``).
    static func index(
        objectKey: Int64, local: ObjectSnapshot?, replacing: Bool, declared: Bool = true, indexed: Set<String>?? = nil,
        leading: Set<String>? = nil, prepared: PreparedObject? = nil, entries: EntryTarget? = nil, bulkLoads: Bool = true,
        previous: ObjectSnapshot? = nil, _ db: Database
    ) throws {
        if replacing, declared, let local {
            let valueIndexed = try indexed ?? valueIndexedFields(of: local.className, db)
            let leading = try leading ?? leadingFields(of: local.className, db)
            let flags = ValueFlags(indexed: valueIndexed, leading: leading)
            if let previous {
                return try update(objectKey: objectKey, local: local, previous: previous, flags: flags, entries: entries, db)
            }
            return try update(objectKey: objectKey, local: local, flags: flags, prepared: prepared, entries: entries, db)
        }
        if replacing {
            for table in StoreTransaction.indexTables where declared || table != "index_entries" {
                try DirectStatement(db.cachedStatement(sql: "DELETE FROM \(table) WHERE object_key = ?"))
                    .execute { $0.bind(objectKey) }
            }
        }
        guard let local else { return }
        // Before v8 (the migration that builds the first index) rows have no value flag.
        let valueIndexed: Set<String>? = declared ? try indexed ?? valueIndexedFields(of: local.className, db) : nil
        let leading: Set<String> = declared ? try leading ?? leadingFields(of: local.className, db) : []
        let rows = prepared?.rows(covering: valueIndexed) ?? keptRows(of: local, valueIndexed)
        try insert(
            kept(rows.added, valueIndexed), objectKey: objectKey, incomplete: incompleteFields(rows),
            flags: declared ? ValueFlags(indexed: valueIndexed, leading: leading) : nil, db)
        if declared { try insertEntries(objectKey: objectKey, rows: rows.added, entries: entries, bulkLoads: bulkLoads, db) }
    }

    /// Where an object's entries go: its key and scope, its `readable` flag, and the
    /// transaction's writer.
    struct EntryTarget {
        var writer: IndexEntryWriter
        var key: ObjectKey
        var scope: String
        var readable: Bool
    }

    /// The `object_fields` and `object_elements` rows of `snapshot` (from no previous state),
    /// worked out only for the fields the store keeps rows of, `valueIndexed` (all when `nil`),
    /// and the built-in ones: a field nobody indexes, a 420-letter text say, is not made into a
    /// key only to be dropped (each save and each acknowledgement stores its object's rows).
    static func keptRows(of snapshot: ObjectSnapshot, _ valueIndexed: Set<String>?) -> SQLIndexRows.Change {
        SQLIndexRows.diff(snapshot: SQLIndexRows.keeping(valueIndexed, of: snapshot), previous: nil)
    }

    /// The rows of `rows` the store keeps: those of the value-indexed fields (all when `nil`).
    static func kept(_ rows: [SQLIndexRows.FieldRow], _ valueIndexed: Set<String>?) -> [SQLIndexRows.FieldRow] {
        guard let valueIndexed else { return rows }
        return rows.filter { valueIndexed.contains($0.field) }
    }

    /// The fields whose values the index does not fully store, among an object's rows `rows`
    /// (computed from no previous state).
    static func incompleteFields(_ rows: SQLIndexRows.Change) -> Set<String> {
        Set(rows.unindexed.filter { $0.delta > 0 }.map(\.field))
    }

    /// Inserts the declared indexes' entries of the object with row key `objectKey`, whose field
    /// rows are `rows` (all of them): bound by `entries`' writer, or else made by SQL from the
    /// stored rows.
    private static func insertEntries(
        objectKey: Int64, rows: [SQLIndexRows.FieldRow], entries: EntryTarget?, bulkLoads: Bool = true, _ db: Database
    ) throws {
        guard let entries else { return try indexEntries(where: "o.key = ?", [objectKey], bulkLoads: bulkLoads, db) }
        try entries.writer.insert(
            objectKey: objectKey, key: entries.key, scope: entries.scope, rows: rows, readable: entries.readable, db)
    }

    /// Brings the stored index rows of the object with row key `objectKey` to those of its local
    /// view `local`, writing only what differs: a saved change to one field rewrites that
    /// field's rows, not the object's two dozen (the offline queue writes each saved object
    /// twice, queued and then acknowledged). The declared indexes' entries are rewritten when a
    /// field they name changed or the object had no rows (it was deleted, or never indexed).
    private static func update(
        objectKey: Int64, local: ObjectSnapshot, flags: ValueFlags, prepared: PreparedObject?,
        entries: EntryTarget?, _ db: Database
    ) throws {
        let valueIndexed = flags.indexed
        let rows = prepared?.rows(covering: valueIndexed) ?? keptRows(of: local, valueIndexed)
        let incomplete = incompleteFields(rows)
        var stored: [String: StoredFieldRow] = [:]
        let read = try Row.fetchCursor(
            db.cachedStatement(
                sql: "SELECT field, kind, sort_key, latitude, longitude, complete, by_value FROM object_fields WHERE object_key = ?"),
            arguments: [objectKey])
        while let row = try read.next() {
            stored[row[0]] = StoredFieldRow(
                kind: row[1], sortKey: row[2], latitude: row[3], longitude: row[4], complete: row[5], byValue: row[6])
        }
        // A row is kept when it is the one the field would get; a value too long to index (no
        // key) is rewritten, as its key cannot tell whether it changed.
        let wanted = kept(rows.added, valueIndexed)
        var changed = Set(stored.keys).subtracting(wanted.map(\.field))
        var added: [SQLIndexRows.FieldRow] = []
        for row in wanted {
            let wanted = StoredFieldRow(
                kind: row.kind, sortKey: row.sortKey.map { Data($0) }, latitude: row.latitude, longitude: row.longitude,
                complete: !incomplete.contains(row.field), byValue: flags.byValue(row.field))
            if let current = stored[row.field], current == wanted, row.sortKey != nil { continue }
            if stored[row.field] != nil { changed.insert(row.field) }
            added.append(row)
        }
        try deleteRows(of: changed, objectKey: objectKey, db)
        try insert(added, objectKey: objectKey, incomplete: incomplete, flags: flags, db)

        // Entries are made from the field rows: again only when a field an index names changed.
        guard let valueIndexed, stored.isEmpty || !valueIndexed.isDisjoint(with: changed.union(added.map(\.field)))
        else { return }
        try DirectStatement(db.cachedStatement(sql: "DELETE FROM index_entries WHERE object_key = ?"))
            .execute { $0.bind(objectKey) }
        try insertEntries(objectKey: objectKey, rows: rows.added, entries: entries, db)
    }

    /// Brings the index rows of the object with row key `objectKey` from those of its previous
    /// local view `previous` (which the stored rows were made from: the caller read it in this
    /// transaction) to those of `local`, without reading them: the fields whose value differs
    /// have their rows deleted and made again. A queued save does this (the view before it is
    /// what it applied the change to): reading the object's rows back and working out every
    /// field's row to compare was a seventh of storing the save. The declared indexes' entries
    /// are rewritten when a field they name changed.
    private static func update(
        objectKey: Int64, local: ObjectSnapshot, previous: ObjectSnapshot, flags: ValueFlags, entries: EntryTarget?,
        _ db: Database
    ) throws {
        let valueIndexed = flags.indexed
        let old = SQLIndexRows.indexedValues(SQLIndexRows.keeping(valueIndexed, of: previous))
        let new = SQLIndexRows.indexedValues(SQLIndexRows.keeping(valueIndexed, of: local))
        // Only the fields with rows: with declared indexes, built-in fields have none (``kept(_:_:)``).
        // A field holding JSON is always rewritten: `==` holds JSON values equal whose keys
        // differ (``Value/holdsJSON``).
        let hasRows = { (field: String) in valueIndexed?.contains(field) ?? true }
        var changed: Set<String> = []
        for (field, value) in old where (new[field] != value || value.holdsJSON) && hasRows(field) { changed.insert(field) }
        for (field, value) in new where (old[field] != value || value.holdsJSON) && hasRows(field) { changed.insert(field) }
        guard !changed.isEmpty else { return }
        try deleteRows(of: changed, objectKey: objectKey, db)
        // The changed fields' rows, worked out as for an object stored anew.
        var subset = local
        subset.fields = local.fields.filter { changed.contains($0.key) }
        let rows = SQLIndexRows.diff(
            snapshot: SQLIndexRows.keeping(valueIndexed, of: subset), previous: nil,
            builtIns: SQLIndexRows.builtInFields.intersection(changed))
        try insert(kept(rows.added, valueIndexed), objectKey: objectKey, incomplete: incompleteFields(rows), flags: flags, db)
        guard let valueIndexed, !valueIndexed.isDisjoint(with: changed) else { return }
        try DirectStatement(db.cachedStatement(sql: "DELETE FROM index_entries WHERE object_key = ?"))
            .execute { $0.bind(objectKey) }
        try insertEntries(objectKey: objectKey, rows: keptRows(of: local, valueIndexed).added, entries: entries, db)
    }

    /// Deletes the `object_fields` and `object_elements` rows of `fields` of the object with row
    /// key `objectKey`.
    private static func deleteRows(of fields: Set<String>, objectKey: Int64, _ db: Database) throws {
        guard !fields.isEmpty else { return }
        let rows = DirectStatement(try db.cachedStatement(sql: "DELETE FROM object_fields WHERE object_key = ? AND field = ?"))
        let elements = DirectStatement(
            try db.cachedStatement(sql: "DELETE FROM object_elements WHERE object_key = ? AND field = ?"))
        for field in fields {
            for statement in [rows, elements] {
                try statement.execute { values in
                    values.bind(objectKey)
                    values.bind(field)
                }
            }
        }
    }

    /// An `object_fields` row as stored, to compare with the row a field would get.
    private struct StoredFieldRow: Equatable {
        var kind: Int64
        var sortKey: Data?
        var latitude: Double?
        var longitude: Double?
        var complete: Bool
        var byValue: Bool
    }

    /// Inserts the `object_fields` and `object_elements` rows `added` of the object with row key
    /// `objectKey` (`incomplete`: the object's fields the index does not fully store).
    static func insert(
        _ added: [SQLIndexRows.FieldRow], objectKey: Int64, incomplete: Set<String>, flags: ValueFlags?, _ db: Database
    ) throws {
        guard !added.isEmpty else { return }
        let flag = flags != nil ? (column: ", by_value", placeholder: ", ?") : (column: "", placeholder: "")
        let field = DirectStatement(
            try db.cachedStatement(
                sql: """
                    INSERT INTO object_fields (object_key, field, kind, sort_key, latitude, longitude, complete\(flag.column))
                    VALUES (?, ?, ?, ?, ?, ?, ?\(flag.placeholder))
                    """))
        let element = DirectStatement(
            try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO object_elements (object_key, field, element_key\(flag.column))
                    VALUES (?, ?, ?\(flag.placeholder))
                    """))
        for row in added {
            try field.execute { values in
                values.bind(row, of: objectKey)
                values.bind(!incomplete.contains(row.field))
                if let flags { values.bind(flags.byValue(row.field)) }
            }
            for key in row.elements {
                try element.execute { values in
                    values.bind(objectKey)
                    values.bind(row.field)
                    values.bind(key)
                    if let flags { values.bind(flags.byValue(row.field)) }
                }
            }
        }
    }
}
