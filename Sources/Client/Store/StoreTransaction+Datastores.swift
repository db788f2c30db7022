import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared

/// Checkpoints, cached query results and datastores inside a store transaction, and an account's
/// data adopted by another scope.
extension StoreTransaction {
    /// Stores (or clears) a datastore's pull checkpoint.
    func setCheckpoint(_ checkpoint: Checkpoint?, datastore: DatastoreID) throws {
        if let checkpoint {
            try db.executeCached(
                sql: """
                    INSERT INTO checkpoints (scope, datastore, checkpoint) VALUES (?, ?, ?)
                    ON CONFLICT(scope, datastore) DO UPDATE SET checkpoint = excluded.checkpoint
                    """,
                arguments: [scope, datastore.rawValue, checkpoint.rawValue])
        } else {
            try db.executeCached(
                sql: "DELETE FROM checkpoints WHERE scope = ? AND datastore = ?", arguments: [scope, datastore.rawValue])
        }
        change.datastores.insert(datastore)
    }

    /// Stores a query's result for the fetch policies; the objects are pinned with the query's
    /// label (`_query:<hash>`), which is first removed from the previous result's objects.
    func setQueryCache(hash: String, datastore: DatastoreID, objects: [ObjectKey], totalCount: Int) throws {
        let label = LocalStore.queryLabel(hash)
        // Pin the new result first, so that objects in both results are never collected.
        for key in objects { try pin(key, label: label) }
        let kept = Set(objects)
        let previous = try Row.fetchAll(
            db, sql: "SELECT datastore, class_name, object_id FROM pins WHERE scope = ? AND label = ?",
            arguments: [scope, label]
        ).compactMap(StoreTransaction.key)
        for key in previous where !kept.contains(key) { try unpin(key, label: label) }
        try db.executeCached(
            sql: """
                INSERT INTO query_cache (scope, hash, datastore, objects, total_count, fetched_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(scope, hash) DO UPDATE SET datastore = excluded.datastore, objects = excluded.objects,
                    total_count = excluded.total_count, fetched_at = excluded.fetched_at
                """,
            arguments: [
                scope, hash, datastore.rawValue, try DocumentCoding.encode(objects.map { [$0.className, $0.objectId] }),
                totalCount, Timestamp.now.millisecondsSinceEpoch,
            ])
    }

    /// Records what the server said about a datastore.
    func saveDatastore(_ info: DatastoreInfo) throws {
        try db.executeCached(
            sql: "INSERT INTO datastores (scope, id, info) VALUES (?, ?, ?) ON CONFLICT(scope, id) DO UPDATE SET info = excluded.info",
            arguments: [scope, info.id.rawValue, try DocumentCoding.encode(info)])
        change.datastores.insert(info.id)
    }

    /// Drops everything kept of a datastore: objects, pins, cached queries, checkpoint, known
    /// info, and — when `discardQueued` — its queued mutations (uncaching discards them).
    func removeDatastore(_ datastore: DatastoreID, discardQueued: Bool) throws {
        let keys = try Row.fetchAll(
            db, sql: "SELECT datastore, class_name, object_id FROM objects WHERE scope = ? AND datastore = ?",
            arguments: [scope, datastore.rawValue]
        ).compactMap(StoreTransaction.key)
        for key in keys { touch(key) }
        let arguments: StatementArguments = [scope, datastore.rawValue]
        try removeFieldIndex(of: datastore)
        try db.executeCached(sql: "DELETE FROM objects WHERE scope = ? AND datastore = ?", arguments: arguments)
        try db.executeCached(sql: "DELETE FROM pins WHERE scope = ? AND datastore = ?", arguments: arguments)
        try db.executeCached(sql: "DELETE FROM query_cache WHERE scope = ? AND datastore = ?", arguments: arguments)
        try db.executeCached(sql: "DELETE FROM checkpoints WHERE scope = ? AND datastore = ?", arguments: arguments)
        try db.executeCached(sql: "DELETE FROM datastores WHERE scope = ? AND id = ?", arguments: arguments)
        if discardQueued {
            try db.executeCached(sql: "DELETE FROM outbox WHERE scope = ? AND datastore = ?", arguments: arguments)
            change.outbox = true
        }
        try dropUnusedReaderSets()
        change.datastores.insert(datastore)
    }

    /// Deletes the reader sets no object names any more (after a datastore's objects went, or
    /// another scope's were taken over): the sets a device keeps stay as many as the distinct
    /// ACLs of what it holds.
    /// - Throws: GRDB's errors.
    func dropUnusedReaderSets() throws {
        let unused = "SELECT id FROM reader_sets s WHERE NOT EXISTS (SELECT 1 FROM objects o WHERE o.readers = s.id)"
        try db.execute(sql: "DELETE FROM reader_set_members WHERE reader_set IN (\(unused))")
        try db.execute(sql: "DELETE FROM reader_sets WHERE id IN (\(unused))")
        readerSetsRead = [:]
    }

    /// Takes over every row of another scope (local use before signing in). Objects and pins the
    /// current scope already has win; queued mutations all move, in their order.
    func adopt(scope other: String) throws {
        let moved = try Row.fetchAll(
            db, sql: "SELECT datastore, class_name, object_id FROM objects WHERE scope = ?", arguments: [other]
        ).compactMap(StoreTransaction.key)
        // The index follows the objects that won: dropped for every object of the other scope,
        // rebuilt below for every moved key.
        try removeIndexRows(where: "SELECT key FROM objects WHERE scope = ?", [other])
        // The moved objects' readable flags were kept for the other scope's readers.
        try db.executeCached(sql: "DELETE FROM readable_for WHERE scope IN (?, ?)", arguments: [scope, other])
        keptReadersRead[scope] = .some(nil)
        keptReadersRead[other] = .some(nil)
        // An object both scopes hold keeps the current scope's row, and the sync label the other
        // scope's had (a `pins` row did, before the label was a column).
        try db.executeCached(
            sql: """
                UPDATE objects SET synced = 1 WHERE scope = ?1 AND synced = 0 AND EXISTS (
                    SELECT 1 FROM objects other WHERE other.scope = ?2 AND other.synced = 1
                        AND other.datastore = objects.datastore AND other.class_name = objects.class_name
                        AND other.object_id = objects.object_id)
                """,
            arguments: [scope, other])
        for table in ["objects", "pins", "query_cache", "checkpoints", "datastores"] {
            try db.executeCached(sql: "UPDATE OR IGNORE \(table) SET scope = ? WHERE scope = ?", arguments: [scope, other])
            try db.executeCached(sql: "DELETE FROM \(table) WHERE scope = ?", arguments: [other])
        }
        for table in ["outbox", "rejected"] {
            try db.executeCached(sql: "UPDATE \(table) SET scope = ? WHERE scope = ?", arguments: [scope, other])
        }
        for key in moved {
            try indexFields(key, local: try object(key).flatMap { $0.deleted ? nil : $0.local })
            touch(key)
        }
        // A bulk load of the other scope ends: its objects' entries were made again above.
        try db.executeCached(sql: "DELETE FROM bulk_loads WHERE scope = ?", arguments: [other])
        try dropUnusedReaderSets()
        change.outbox = true
    }
}
