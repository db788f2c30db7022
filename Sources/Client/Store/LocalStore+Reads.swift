import Foundation
import GRDB
import Logging
import RooftopSQLite
import RooftopShared
import Synchronization

/// What the store answers in one read each: the session, objects, labels, the queue, refusals,
/// checkpoints, cached query results and datastores.
extension LocalStore {
    // MARK: Session

    /// The persisted session, if signed in.
    func session() throws(RooftopError) -> StoredSession? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT body FROM session WHERE id = 1").map {
                try DocumentCoding.decode(StoredSession.self, from: $0)
            }
        }
    }

    /// Persists the session (`nil` removes it: log-out).
    func saveSession(_ session: StoredSession?) throws(RooftopError) {
        try write(scope: "") { transaction in
            if let session {
                try transaction.db.execute(
                    sql: "INSERT INTO session (id, body) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET body = excluded.body",
                    arguments: [try DocumentCoding.encode(session)])
            } else {
                try transaction.db.execute(sql: "DELETE FROM session")
            }
        }
    }

    // MARK: Objects

    /// One object's row (a point read).
    func object(_ key: ObjectKey, scope: String) throws(RooftopError) -> LocalObjectRow? {
        // Read alone on the point reader, decoded once it is let go.
        try pointRead { db in try StoreTransaction.objectTexts(key, scope: scope, db, alone: true) }?.decoded(key)
    }

    /// The objects of a scope, optionally of one datastore and/or class, deleted ones excluded.
    func objects(scope: String, datastore: DatastoreID? = nil, className: String? = nil) throws(RooftopError)
        -> [LocalObjectRow]
    {
        try read { db in
            var sql = "SELECT * FROM objects WHERE scope = ? AND deleted = 0"
            var arguments: [any DatabaseValueConvertible] = [scope]
            if let datastore {
                sql += " AND datastore = ?"
                arguments.append(datastore.rawValue)
            }
            if let className {
                sql += " AND class_name = ?"
                arguments.append(className)
            }
            return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map(StoreTransaction.row)
        }
    }

    /// The live objects pinned with a label.
    func objects(scope: String, pinnedWith label: String) throws(RooftopError) -> [LocalObjectRow] {
        try read { db in
            // The sync label is a column of the objects, the pending label the queue
            // (``StoreTransaction/pin(_:label:)``): read from the queue's rows, not by testing every
            // stored object.
            let sql =
                switch label {
                case LocalStore.syncLabel: "SELECT o.* FROM objects o WHERE o.scope = ? AND o.synced = 1 AND o.deleted = 0"
                case LocalStore.pendingLabel:
                    """
                    SELECT o.* FROM objects o WHERE o.scope = ?1 AND o.deleted = 0
                        AND (o.datastore, o.class_name, o.object_id) IN (
                            SELECT datastore, class_name, object_id FROM outbox WHERE scope = ?1)
                    """
                default:
                    """
                    SELECT o.* FROM objects o JOIN pins p ON p.scope = o.scope AND p.datastore = o.datastore
                        AND p.class_name = o.class_name AND p.object_id = o.object_id
                    WHERE o.scope = ? AND p.label = ? AND o.deleted = 0
                    """
                }
            let arguments: StatementArguments = LocalStore.isDerived(label) ? [scope] : [scope, label]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(StoreTransaction.row)
        }
    }

    /// The labels an object is pinned with.
    func labels(of key: ObjectKey, scope: String) throws(RooftopError) -> Set<String> {
        try read { db in Set(try StoreTransaction.labels(of: key, scope: scope, db)) }
    }

    // MARK: Queue, checkpoints, caches

    /// The offline queue, in order.
    func outbox(scope: String) throws(RooftopError) -> [OutboxRow] {
        try read { db in
            try DirectStatement(
                db.cachedStatement(sql: "SELECT \(StoreTransaction.outboxColumns) FROM outbox WHERE scope = ? ORDER BY seq")
            ).fetchAll({ $0.bind(scope) }, StoreTransaction.outboxRow)
        }
    }

    /// The offline queue's heads, in order (its rows without their mutations, nothing decoded).
    func outboxHeads(scope: String) throws(RooftopError) -> [OutboxHead] {
        try read { db in try StoreTransaction.outboxHeads(scope: scope, db) }
    }

    /// Every queued mutation of every scope, in order (the engine sends a scope's rows only while
    /// that scope is signed in).
    func outboxCount(scope: String) throws(RooftopError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE scope = ?", arguments: [scope]) ?? 0 }
    }

    /// Whether the scope's queue holds a row waiting to be sent and due at `now` (pending, its
    /// retry time reached or none).
    /// - Throws: `cache` when the store cannot be read.
    func outboxHasDue(scope: String, now: Int64) throws(RooftopError) -> Bool {
        try read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM outbox WHERE scope = ? AND state = ?
                        AND (next_attempt_at IS NULL OR next_attempt_at <= ?))
                    """,
                arguments: [scope, OutboxState.pending.rawValue, now]) ?? false
        }
    }

    /// The refused mutations set aside, oldest first.
    func rejected(scope: String) throws(RooftopError) -> [RejectedRow] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM rejected WHERE scope = ? ORDER BY rejected_at", arguments: [scope])
                .map { row in
                    RejectedRow(
                        mutation: try Mutation.decodeDocument(row["mutation"]),
                        error: try DocumentCoding.decode(RooftopError.self, from: row["error"]),
                        localState: try (row["local_state"] as String?).map {
                            try DocumentCoding.decode(ObjectSnapshot.self, from: $0)
                        },
                        rejectedAt: Timestamp(millisecondsSinceEpoch: row["rejected_at"]),
                        folded: try (row["folded"] as String?).map { try DocumentCoding.decode([MutationID].self, from: $0) }
                            ?? [])
                }
        }
    }

    /// The pull checkpoint of a datastore.
    func checkpoint(scope: String, datastore: DatastoreID) throws(RooftopError) -> Checkpoint? {
        try read { db in
            try String.fetchOne(
                db, sql: "SELECT checkpoint FROM checkpoints WHERE scope = ? AND datastore = ?",
                arguments: [scope, datastore.rawValue]
            ).map(Checkpoint.init)
        }
    }

    /// A cached query result.
    func queryCache(scope: String, hash: String) throws(RooftopError) -> QueryCacheRow? {
        try read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT * FROM query_cache WHERE scope = ? AND hash = ?", arguments: [scope, hash])
            else { return nil }
            let datastore = try DatastoreID(row["datastore"] as String)
            let entries = try DocumentCoding.decode([[String]].self, from: row["objects"])
            return QueryCacheRow(
                hash: hash, datastore: datastore,
                objects: entries.compactMap { $0.count == 2 ? ObjectKey(datastore: datastore, className: $0[0], objectId: $0[1]) : nil },
                totalCount: row["total_count"], fetchedAt: Timestamp(millisecondsSinceEpoch: row["fetched_at"]))
        }
    }

    /// The datastores known locally.
    func datastores(scope: String) throws(RooftopError) -> [DatastoreInfo] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT info FROM datastores WHERE scope = ? ORDER BY id", arguments: [scope])
                .map { try DocumentCoding.decode(DatastoreInfo.self, from: $0) }
        }
    }

    /// Moves everything of scope `from` (local use without an account) into scope `to` (the user
    /// who just signed in). Rows the user already has are kept; the local rows are merged in as
    /// far as they do not collide, and queued mutations all move (they merge on the server).
    func migrateScope(from: String, to: String) throws(RooftopError) {
        guard from != to else { return }
        try write(scope: to) { transaction in try transaction.adopt(scope: from) }
    }
}
