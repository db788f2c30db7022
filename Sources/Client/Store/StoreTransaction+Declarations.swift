import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared

/// What a class's declared indexes decide about its rows: which fields keep rows and which are
/// in the value indexes (``ValueFlags``), the rows and flags brought to a new declaration, and the
/// compound indexes' entries made from stored rows.
extension StoreTransaction {
    /// The fields of `className` whose rows are in the value indexes: those its declared indexes
    /// name, or `nil` (every field) when it declares none. A class with a million objects declares
    /// the indexes its queries need, and each field kept by value is a write into a large index
    /// for every object stored (three quarters of an initial sync's time when every field was);
    /// the store keeps no rows of the other fields, whose conditions read each object's document.
    static func valueIndexedFields(of className: String, _ db: Database) throws -> Set<String>? {
        let rows = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT field1, field2, field3, field4 FROM class_indexes WHERE class_name = ?"),
            arguments: [className])
        var fields: Set<String>?
        while let row = try rows.next() {
            let named: [String] = (0..<4).map { row[$0] }
            fields = (fields ?? []).union(named.filter { !$0.isEmpty })
        }
        return fields
    }

    /// Brings the rows of `className`'s objects to the fields its declared indexes name now
    /// (``valueIndexedFields(of:_:)``), after a declaration changed them from `previously` (`nil`:
    /// every field): the rows of fields no longer value-indexed go, and when fields were added,
    /// each object's rows of those are made from its local view.
    static func keepValueRows(of className: String, previously: Set<String>?, _ db: Database) throws {
        let indexed = try valueIndexedFields(of: className, db)
        if let indexed {
            let list = SQLTextSet.list(indexed, dialect: .sqlite)
            for table in ["object_fields", "object_elements"] {
                try db.execute(
                    sql: """
                        DELETE FROM \(table) WHERE object_key IN (SELECT key FROM objects WHERE class_name = ?)
                        AND field NOT IN (\(list.sql))
                        """,
                    arguments: StatementArguments([className] + list.arguments))
            }
        }
        // Rows of every field were kept before (no declaration), or no field was added.
        guard let previously else { return }
        if let indexed, indexed.isSubset(of: previously) { return }
        let leading = try leadingFields(of: className, db)
        let objects = try Row.fetchCursor(
            db, sql: "SELECT * FROM objects WHERE class_name = ? AND deleted = 0", arguments: [className])
        let present = try db.cachedStatement(sql: "SELECT field FROM object_fields WHERE object_key = ?")
        while let row = try objects.next() {
            guard let local = try StoreTransaction.row(row).local else { continue }
            let objectKey: Int64 = row["key"]
            let stored = try Set(String.fetchCursor(present, arguments: [objectKey]))
            let rows = SQLIndexRows.diff(snapshot: local, previous: nil)
            try insert(
                kept(rows.added, indexed).filter { !stored.contains($0.field) }, objectKey: objectKey,
                incomplete: incompleteFields(rows), flags: ValueFlags(indexed: indexed, leading: leading), db)
        }
    }

    /// Sets the value flags of the rows of `className`'s objects to what its declared indexes
    /// name now (``valueIndexedFields(of:_:)``), touching only the rows whose flag changes (the
    /// migration to v8; since v11 a store keeps no rows of other fields).
    /// `leadingOutOfValueIndex`: `false` for the migration to v8, older than that rule, whose flags a
    /// later migration (v11) acts on.
    static func flagValueIndexed(of className: String, leadingOutOfValueIndex: Bool = true, _ db: Database) throws {
        let indexed = try valueIndexedFields(of: className, db)
        let leading = leadingOutOfValueIndex ? try leadingFields(of: className, db) : []
        for table in ["object_fields", "object_elements"] {
            // Every field when the class declares nothing; else the fields named, but for the
            // rows of the fields that lead an index (``ValueFlags``).
            var flag = "1"
            var names: [String] = []
            if let indexed {
                let byValue = indexed.subtracting(leading)
                let list = SQLTextSet.list(byValue, dialect: .sqlite)
                flag = byValue.isEmpty ? "0" : "(field IN (\(list.sql)))"
                names = list.arguments
            }
            try db.execute(
                sql: """
                    UPDATE \(table) SET by_value = \(flag)
                    WHERE object_key IN (SELECT key FROM objects WHERE class_name = ?) AND by_value != \(flag)
                    """,
                arguments: StatementArguments(names + [className] + names))
        }
    }

    /// The fields of `className` that lead one of its declared indexes: their `object_fields`
    /// rows are kept out of the value index (``ValueFlags``).
    static func leadingFields(of className: String, _ db: Database) throws -> Set<String> {
        try Set(String.fetchAll(
            db.cachedStatement(sql: "SELECT field1 FROM class_indexes WHERE class_name = ?"), arguments: [className]))
    }

    /// Which of a class's index rows are in the value indexes (`by_value = 1`): those of the
    /// fields its declared indexes name (every field's when it declares none), except the rows
    /// of a field that leads a declared index. That index's entries hold the field's key first,
    /// and its element entries each element of a list (``SQLCompoundIndex/elementEntries``): the
    /// compiler finds its values and elements there (``SQLQueryCompiler/entryKeyed``), and the
    /// rows, still kept for each object's own tests and orders, are spared a write into the value
    /// index, at a random place of a large index (a fifth of an initial sync's writes with two
    /// declared indexes).
    struct ValueFlags {
        /// The fields with rows (``valueIndexedFields(of:_:)``); `nil`: every field.
        var indexed: Set<String>?
        /// The fields that lead a declared index (``leadingFields(of:_:)``).
        var leading: Set<String>

        /// The flag of a row of `field` (of its value, or of one of its elements).
        func byValue(_ field: String) -> Bool {
            guard indexed?.contains(field) ?? true else { return false }
            return !leading.contains(field)
        }
    }

    /// The tables of an object's index rows, keyed by `object_key`.
    static let indexTables = ["object_fields", "object_elements", "index_entries"]

    /// Writes the entries of the declared indexes (``SQLCompoundIndex``) of the objects `condition`
    /// (on `objects o`, `d` the index declaration) selects, from their `object_fields` rows (and
    /// the element entries of an index led by a list, ``SQLCompoundIndex/elementEntries``, from
    /// its `object_elements` rows), and
    /// adds them to the counts per first key of the indexes that keep them
    /// (``SQLCompoundIndex/keepsKeyCounts``: `d.field2 != ''`; `counts`: `false` only for a
    /// store older than those counts). An object a bulk load has not built yet (from its
    /// datastore's `built_to` on, ``LocalStore/BulkLoading``) gets none: its pass makes them
    /// (`bulkLoads`: `false` only for a store older than v17, which has no bulk loads).
    /// `ordered`: inserted in the index's order (a pass's many objects: each leaf written once).
    static func indexEntries(
        where condition: String, _ arguments: StatementArguments, counts: Bool = true, bulkLoads: Bool = true,
        ordered: Bool = false, _ db: Database
    ) throws {
        // A field the index does not have (`''`): the empty key, without a look-up.
        let key = { (field: String) in
            "CASE WHEN d.\(field) = '' THEN X'' ELSE"
                + " coalesce((SELECT f.sort_key FROM object_fields f WHERE f.object_key = o.key AND f.field = d.\(field)), X'') END"
        }
        let joined = """
            FROM objects o
            JOIN index_partitions p ON p.scope = o.scope AND p.datastore = o.datastore
            JOIN class_indexes d ON d.id = p.class_index AND d.class_name = o.class_name
            """
        let unbuilt = """
             AND NOT EXISTS (
                SELECT 1 FROM bulk_loads b WHERE b.scope = o.scope AND b.datastore = o.datastore AND o.key >= b.built_to)
            """
        let filtered = "WHERE \(condition) AND o.deleted = 0" + (bulkLoads ? unbuilt : "")
        let order = ordered ? "\nORDER BY 1, 2, 3, 4, 5, 6" : ""
        let selected = joined + "\n" + filtered
        try db.cachedStatement(
            sql: """
                INSERT INTO index_entries (partition, k1, k2, k3, k4, object_key, readable)
                SELECT p.id, \(key("field1")), \(key("field2")), \(key("field3")), \(key("field4")), o.key, o.readable
                \(selected)\(order)
                """
        ).execute(arguments: arguments)
        // The element entries of the indexes led by a list: one per element row of the field.
        try db.cachedStatement(
            sql: """
                INSERT INTO index_entries (partition, k1, k2, k3, k4, object_key, readable)
                SELECT -p.id, e.element_key, \(key("field2")), \(key("field3")), \(key("field4")), o.key, o.readable
                \(joined)
                JOIN object_elements e ON e.object_key = o.key AND e.field = d.field1
                \(filtered)\(order)
                """
        ).execute(arguments: arguments)
        guard counts else { return }
        try db.cachedStatement(
            sql: """
                INSERT INTO index_key_counts (partition, k1, live, readable)
                SELECT p.id, \(key("field1")) AS k, count(*), sum(o.readable = 1)
                \(selected) AND d.field2 != ''
                GROUP BY p.id, k
                ON CONFLICT (partition, k1) DO UPDATE SET live = live + excluded.live, readable = readable + excluded.readable
                """
        ).execute(arguments: arguments)
    }

    /// Builds the index of every stored object (the migration that adds it, before declared indexes).
    static func indexAll(_ db: Database) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM objects WHERE deleted = 0")
        while let row = try rows.next() {
            let object = try StoreTransaction.row(row)
            try index(objectKey: row["key"], local: object.local, replacing: false, declared: false, db)
        }
    }
}
