import Foundation
import GRDB
import RooftopSQL
import RooftopShared

/// The local index, in the layout the server's storage has too (``SQLIndexLayout``): for every
/// stored object that is not deleted, one `object_fields` row per field of its local view
/// (built-in fields included) with the value's order-preserving key, `object_elements` rows for
/// list elements and relation members, and `object_readers` rows for who may read it. Rows are
/// computed by ``SQLIndexRows``, the server's code; local queries compile to SQL over them with
/// the server's ``SQLQueryCompiler``.
///
/// A value the index does not fully store (a key longer than `Value.indexedKeyLimit`) has its
/// row marked incomplete: queries on that field let the shared evaluator decide.
extension StoreTransaction {
    /// Replaces an object's index rows with those of its local view (none when `nil`).
    func indexFields(_ key: ObjectKey, local: ObjectSnapshot?) throws {
        guard let objectKey = try StoreTransaction.objectKey(key, scope: scope, db) else { return }
        try StoreTransaction.index(objectKey: objectKey, local: local, replacing: true, db)
    }

    /// Removes the index rows of a datastore's objects (before the objects go).
    func removeFieldIndex(of datastore: DatastoreID) throws {
        try StoreTransaction.removeIndexRows(
            where: "SELECT key FROM objects WHERE scope = ? AND datastore = ?", [scope, datastore.rawValue], db)
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
        for table in ["object_fields", "object_elements", "object_readers"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE object_key IN (\(select))", arguments: arguments)
        }
    }

    /// Writes the index rows of the object with row key `objectKey` for its local view `local`.
    static func index(objectKey: Int64, local: ObjectSnapshot?, replacing: Bool, _ db: Database) throws {
        if replacing {
            for table in ["object_fields", "object_elements", "object_readers"] {
                try db.cachedStatement(sql: "DELETE FROM \(table) WHERE object_key = ?").execute(arguments: [objectKey])
            }
        }
        guard let local else { return }
        let rows = SQLIndexRows.diff(snapshot: local, previous: nil)
        let incomplete = Set(rows.unindexed.filter { $0.delta > 0 }.map(\.field))
        let field = try db.cachedStatement(
            sql: """
                INSERT INTO object_fields (object_key, field, kind, sort_key, latitude, longitude, complete)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
        let element = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO object_elements (object_key, field, element_key) VALUES (?, ?, ?)")
        for row in rows.added {
            try field.execute(arguments: [
                objectKey, row.field, row.kind, row.sortKey.map { Data($0) }, row.latitude, row.longitude,
                incomplete.contains(row.field) ? 0 : 1,
            ])
            for key in row.elements { try element.execute(arguments: [objectKey, row.field, Data(key)]) }
        }
        let reader = try db.cachedStatement(sql: "INSERT OR IGNORE INTO object_readers (object_key, principal) VALUES (?, ?)")
        for principal in SQLIndexRows.readers(of: local.acl) {
            try reader.execute(arguments: [objectKey, principal])
        }
    }

    /// Builds the index of every stored object (the migration that adds it).
    static func indexAll(_ db: Database) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM objects WHERE deleted = 0")
        while let row = try rows.next() {
            let object = try StoreTransaction.row(row)
            try index(objectKey: row["key"], local: object.local, replacing: false, db)
        }
    }
}
