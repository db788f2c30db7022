import Foundation
import GRDB
import RooftopShared

/// The local field index: for every stored object that is not deleted, one row per field of its
/// local view with the value's order-preserving key (`Value/sortKey`, the key the server indexes
/// too). Local queries use it to read only the objects that can match their conditions
/// (``FieldIndexPlan``); the shared evaluator still decides.
///
/// A key longer than `Value/indexedKeyLimit` (the server's limit too) is stored as `NULL`, which every indexed condition
/// accepts: such objects are always read and evaluated, so no match is lost.
extension StoreTransaction {
    /// Replaces an object's index rows with those of its local view (none when `nil`).
    func indexFields(_ key: ObjectKey, local: ObjectSnapshot?) throws {
        try StoreTransaction.indexFields(key, scope: scope, local: local, db)
    }

    /// Removes the index rows of a datastore's objects.
    func removeFieldIndex(of datastore: DatastoreID) throws {
        try db.execute(
            sql: "DELETE FROM local_fields WHERE scope = ? AND datastore = ?", arguments: [scope, datastore.rawValue])
    }

    /// Replaces an object's index rows with those of its local view (none when `nil`);
    /// `replacing: false` when it has none yet.
    static func indexFields(
        _ key: ObjectKey, scope: String, local: ObjectSnapshot?, replacing: Bool = true, _ db: Database
    ) throws {
        if replacing {
            try db.cachedStatement(
                sql: "DELETE FROM local_fields WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id = ?"
            ).execute(arguments: [scope, key.datastore.rawValue, key.className, key.objectId])
        }
        guard let local else { return }
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO local_fields (scope, datastore, class_name, object_id, field, sort_key)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
        for (field, value) in local.fields {
            let stored = value.indexedSortKey.map { Data($0) }
            try insert.execute(arguments: [scope, key.datastore.rawValue, key.className, key.objectId, field, stored])
        }
    }

    /// Builds the index of every stored object (the migration that adds it).
    static func indexAllFields(_ db: Database) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM objects WHERE deleted = 0")
        while let row = try rows.next() {
            let object = try StoreTransaction.row(row)
            try indexFields(object.key, scope: row["scope"], local: object.local, db)
        }
    }
}
