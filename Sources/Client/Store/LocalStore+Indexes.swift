import GRDB
import RooftopSQL
import RooftopShared

/// The compound indexes classes declare (``ClassSettings/indexes``), kept in the local store for
/// every scope and datastore holding the class (``SQLCompoundIndex``): learned from the server's
/// class settings when a pull brings objects of the class, built from the stored objects then,
/// and kept by every write after. The fields they name are the class's only fields in the value
/// indexes (``StoreTransaction/valueIndexedFields(of:_:)``), and the only ones with rows.
extension LocalStore {
    /// The fields of each of `classes` whose rows the store keeps
    /// (``StoreTransaction/valueIndexedFields(of:_:)``; `nil` for every field).
    /// - Throws: `cache` when the store cannot be read.
    func valueIndexedFields(of classes: Set<String>) throws(RooftopError) -> [String: Set<String>?] {
        try read { db in
            var fields: [String: Set<String>?] = [:]
            for className in classes { fields[className] = .some(try StoreTransaction.valueIndexedFields(of: className, db)) }
            return fields
        }
    }

    /// Makes `indexes` the declared indexes of `className`: builds the entries of those not kept
    /// yet (from every stored object of the class, in one write) and drops those of indexes no
    /// longer declared, and makes the rows of the fields they name (dropping the others'). Nothing is written when
    /// they are the ones kept. Indexes are validated
    /// first (``ClassSettings/validateIndexes(_:)``).
    /// - Returns: Whether anything changed.
    /// - Throws: `illegalArgument` for invalid indexes; `cache` when the store cannot be written.
    @discardableResult
    func declareIndexes(_ indexes: [[String]], of className: String) throws(RooftopError) -> Bool {
        try ClassSettings.validateIndexes(indexes)
        let wanted = Set(indexes)
        guard try read({ db in try Set(LocalStore.declaredIndexes(of: className, db).values) }) != wanted else {
            return false
        }
        return try write(scope: "") { transaction in
            let db = transaction.db
            // Read again in the write: another pull may have declared them meanwhile.
            let kept = try LocalStore.declaredIndexes(of: className, db)
            guard Set(kept.values) != wanted else { return false }
            let previouslyIndexed = try StoreTransaction.valueIndexedFields(of: className, db)
            for (id, fields) in kept where !wanted.contains(fields) {
                // Its entries and its element entries (``SQLCompoundIndex/elementEntries``).
                try db.execute(
                    sql: """
                        DELETE FROM index_entries WHERE partition IN (
                            SELECT id FROM index_partitions WHERE class_index = ?
                            UNION ALL SELECT -id FROM index_partitions WHERE class_index = ?)
                        """,
                    arguments: [id, id])
                try db.execute(sql: "DELETE FROM index_partitions WHERE class_index = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM class_indexes WHERE id = ?", arguments: [id])
            }
            var added: [Int64] = []
            for fields in indexes where !kept.values.contains(fields) {
                let padded = fields + Array(repeating: "", count: ClassSettings.maxIndexFields - fields.count)
                // The insert's trigger makes the partitions of the datastores holding the class.
                try db.execute(
                    sql: "INSERT INTO class_indexes (class_name, field1, field2, field3, field4) VALUES (?, ?, ?, ?, ?)",
                    arguments: StatementArguments([className] + padded))
                added.append(db.lastInsertedRowID)
            }
            // The new indexes' entries are made from the rows of the fields they name.
            try StoreTransaction.keepValueRows(of: className, previously: previouslyIndexed, db)
            // A field may have come to lead an index, or ceased to: its rows' flags follow.
            try StoreTransaction.flagValueIndexed(of: className, db)
            for id in added { try StoreTransaction.indexEntries(where: "d.id = ?", [id], db) }
            transaction.forgetValueIndexedFields()
            return true
        }
    }

    /// The indexes declared for `className`, by their row ID.
    static func declaredIndexes(of className: String, _ db: Database) throws -> [Int64: [String]] {
        var indexes: [Int64: [String]] = [:]
        let rows = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT id, field1, field2, field3, field4 FROM class_indexes WHERE class_name = ?"),
            arguments: [className])
        while let row = try rows.next() {
            let fields: [String] = [row["field1"], row["field2"], row["field3"], row["field4"]]
            indexes[row["id"]] = fields.filter { !$0.isEmpty }
        }
        return indexes
    }

    /// What a query of `className` in a scope's datastore compiles against, read in one
    /// statement: its compound indexes with a partition there, in declaration order; the fields
    /// with rows (``StoreTransaction/valueIndexedFields(of:_:)``, `nil` for every field); and
    /// those that lead an index (``StoreTransaction/leadingFields(of:_:)``).
    static func declaredIndexing(scope: String, datastore: DatastoreID, className: String, _ db: Database) throws
        -> (indexes: [SQLCompoundIndex], valueIndexed: Set<String>?, leading: Set<String>)
    {
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT p.id, d.field1, d.field2, d.field3, d.field4 FROM class_indexes d
                    LEFT JOIN index_partitions p ON p.class_index = d.id AND p.scope = ? AND p.datastore = ?
                    WHERE d.class_name = ? ORDER BY d.id
                    """),
            arguments: [scope, datastore.rawValue, className])
        var indexes: [SQLCompoundIndex] = []
        var valueIndexed: Set<String>?
        var leading: Set<String> = []
        while let row = try rows.next() {
            let fields = ([row[1], row[2], row[3], row[4]] as [String]).filter { !$0.isEmpty }
            valueIndexed = (valueIndexed ?? []).union(fields)
            if let first = fields.first { leading.insert(first) }
            if let partition: Int64 = row[0] { indexes.append(SQLCompoundIndex(partition: partition, fields: fields)) }
        }
        return (indexes, valueIndexed, leading)
    }

    /// The compound indexes of `className` in a scope's datastore, for the query compiler
    /// (``declaredIndexing(scope:datastore:className:_:)``'s).
    static func compoundIndexes(
        scope: String, datastore: DatastoreID, className: String, _ db: Database
    ) throws -> [SQLCompoundIndex] {
        try declaredIndexing(scope: scope, datastore: datastore, className: className, db).indexes
    }
}
