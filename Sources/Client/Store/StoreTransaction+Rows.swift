import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared

/// Stored rows read back: objects, their keys and labels, queue rows.
extension StoreTransaction {
    /// An object's row, read directly (``DirectStatement``): a queued save, its acknowledgement
    /// and the app's lookup of an object (``LocalStore/object(_:scope:)``) each read one, and
    /// GRDB's `Row` was a third of the read.
    static func object(_ key: ObjectKey, scope: String, _ db: Database) throws -> LocalObjectRow? {
        try objectTexts(key, scope: scope, db).map { texts throws(RooftopError) in try texts.decoded(key) }
    }

    /// An object's row as stored, not decoded: the app's lookup reads it on the point reader's
    /// connection, alone (outside a transaction: `alone`), and decodes it after letting the
    /// connection go.
    static func objectTexts(_ key: ObjectKey, scope: String, _ db: Database, alone: Bool = false) throws
        -> StoredObjectTexts?
    {
        try DirectStatement(
            db.cachedStatement(
                sql: """
                    SELECT server, local, local_is_server, deleted FROM objects
                    WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id = ?
                    """)
        ).fetchFirst(
            alone: alone,
            { $0.bind(scope: scope, key) }
        ) { columns in
            StoredObjectTexts(
                server: try columns.text(0), local: try columns.text(1), form: columns.int64(2), deleted: columns.int64(3))
        }
    }

    static func row(_ row: Row) throws -> LocalObjectRow {
        // Rows from before v6, read by the migration that indexed them, have no form column.
        try StoredObjectTexts(
            server: row["server"], local: row["local"], form: row["local_is_server"], deleted: row["deleted"]
        ).decoded(try key(row))
    }

    /// The key of a stored object's row.
    /// - Throws: `cache` when its datastore ID does not read (the ID's own error as the cause).
    static func key(_ row: Row) throws(RooftopError) -> ObjectKey {
        let datastore: DatastoreID
        do {
            datastore = try DatastoreID(row["datastore"] as String)
        } catch {
            throw RooftopError(.cache, "a stored object has an invalid datastore ID", cause: error)
        }
        return ObjectKey(datastore: datastore, className: row["class_name"], objectId: row["object_id"])
    }

    static func labels(of key: ObjectKey, scope: String, _ db: Database) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT label FROM pins WHERE scope = ?1 AND datastore = ?2 AND class_name = ?3 AND object_id = ?4
                    UNION ALL
                    SELECT '\(LocalStore.syncLabel)' FROM objects
                    WHERE scope = ?1 AND datastore = ?2 AND class_name = ?3 AND object_id = ?4 AND synced = 1
                    UNION ALL
                    SELECT '\(LocalStore.pendingLabel)'
                    WHERE EXISTS (SELECT 1 FROM outbox WHERE scope = ?1 AND datastore = ?2 AND class_name = ?3 AND object_id = ?4)
                    ORDER BY 1
                    """),
            arguments: [scope, key.datastore.rawValue, key.className, key.objectId])
    }

    /// The condition on `objects o` that it has queued changes (``LocalStore/pendingLabel``).
    static let pendingCondition =
        "EXISTS (SELECT 1 FROM outbox q WHERE q.scope = o.scope AND q.datastore = o.datastore"
        + " AND q.class_name = o.class_name AND q.object_id = o.object_id)"

    /// The condition on `objects o` that it is pinned with `label`.
    static func pinned(with label: String) -> (sql: String, arguments: [String]) {
        if label == LocalStore.syncLabel { return ("o.synced = 1", []) }
        if label == LocalStore.pendingLabel { return (pendingCondition, []) }
        return (
            "EXISTS (SELECT 1 FROM pins p WHERE p.scope = o.scope AND p.label = ? AND p.datastore = o.datastore"
                + " AND p.class_name = o.class_name AND p.object_id = o.object_id)",
            [label]
        )
    }

    /// The columns a queue row is read from (``outboxRow(_:)``), in order.
    static let outboxColumns = "seq, mutation, state, attempts, last_error, next_attempt_at, folded"

    /// A queue row, read directly (``DirectStatement``) from ``outboxColumns``: every read of a
    /// queued row whole goes through it.
    /// - Throws: `cache` when a required column is `NULL`; the decoders' errors.
    static func outboxRow(_ columns: DirectStatement.Columns) throws -> OutboxRow {
        guard let seq = columns.int64(0), let mutation = try columns.text(1), let state = try columns.text(2) else {
            throw RooftopError(.cache, "a queued change has no order, mutation or state")
        }
        return OutboxRow(
            seq: seq,
            mutation: try Mutation.decodeDocument(mutation),
            state: OutboxState(rawValue: state) ?? .pending,
            attempts: columns.int64(3).map { Int(clamping: $0) } ?? 0,
            lastError: try columns.text(4).map { try DocumentCoding.decode(RooftopError.self, from: $0) },
            nextAttemptAt: columns.int64(5),
            folded: try columns.text(6).map { try DocumentCoding.decode([MutationID].self, from: $0) } ?? [])
    }

    /// One queued row, by mutation ID (read directly).
    static func outboxRow(_ id: MutationID, scope: String, _ db: Database) throws -> OutboxRow? {
        try DirectStatement(
            db.cachedStatement(sql: "SELECT \(outboxColumns) FROM outbox WHERE scope = ? AND mutation_id = ?")
        ).fetchFirst(
            { values in
                values.bind(scope)
                values.bind(id.rawValue)
            }, outboxRow)
    }
}

extension LocalStore {
    /// The pin label holding a cached query result.
    static func queryLabel(_ hash: String) -> String { "_query:" + hash }
    /// The pin label `pin()` uses without a name.
    static let defaultLabel = "_default"
    /// The label holding objects with queued changes until the server has them (as in Parse's local datastore:
    /// saveEventually pins the object until it is saved). It is read from the queue (an object
    /// has it while it has queued changes), not stored: a `pins` row written with every queued
    /// save and deleted with its acknowledgement was three of the seven pages the save's commit
    /// wrote (v20 deleted those rows).
    static let pendingLabel = "_pending"

    /// Whether `label` is read from other rows than `pins` (``syncLabel``, ``pendingLabel``).
    static func isDerived(_ label: String) -> Bool { label == syncLabel || label == pendingLabel }
}

/// An object's row as stored (``StoreTransaction/objectTexts(_:scope:_:alone:)``).
struct StoredObjectTexts: Sendable {
    var server: String?
    var local: String?
    /// ``StoredForm``'s stored value (`nil` in rows from before v6).
    var form: Int64?
    var deleted: Int64?

    /// The row decoded.
    /// - Throws: `cache` when a text is not what its form says it is.
    func decoded(_ key: ObjectKey) throws(RooftopError) -> LocalObjectRow {
        let form = try form.map { value throws(RooftopError) in try StoredForm(stored: value) } ?? .separate
        let (server, local) = try form.states(server: server, local: local, of: key)
        return LocalObjectRow(key: key, server: server, local: local, deleted: (deleted ?? 0) != 0)
    }
}

extension DirectStatement.Binder {
    /// Binds the columns that name an object in the client's tables, in their order: `scope,
    /// datastore, class_name, object_id`.
    mutating func bind(scope: String, _ key: ObjectKey) {
        bind(scope)
        bind(key.datastore.rawValue)
        bind(key.className)
        bind(key.objectId)
    }
}
