import GRDB
import RooftopSQLite
import RooftopShared

extension StoreTransaction {
    /// The queue's heads, in order: its rows without their mutations (nothing decoded).
    func outboxHeads() throws -> [OutboxHead] {
        try StoreTransaction.outboxHeads(scope: scope, db)
    }

    /// The heads of `scope`'s queue, in order.
    /// - Throws: `cache` for a row with an invalid datastore ID; GRDB's errors.
    static func outboxHeads(scope: String, _ db: Database) throws -> [OutboxHead] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT seq, datastore, class_name, object_id, state, next_attempt_at FROM outbox"
                    + " WHERE scope = ? ORDER BY seq"),
            arguments: [scope]
        ).map { row in
            guard let datastore = try? DatastoreID(row[1] as String) else {
                throw RooftopError(.cache, "a queued change has an invalid datastore ID")
            }
            return OutboxHead(
                seq: row[0], key: ObjectKey(datastore: datastore, className: row[2], objectId: row[3]),
                state: OutboxState(rawValue: row[4]) ?? .pending, nextAttemptAt: row[5])
        }
    }

    /// One queued row, by its place in the queue.
    /// - Throws: `cache` when the row is gone (the caller read its head in the same transaction).
    func outboxRow(seq: Int64) throws -> OutboxRow {
        guard
            let row = try DirectStatement(
                db.cachedStatement(
                    sql: "SELECT \(StoreTransaction.outboxColumns) FROM outbox WHERE scope = ? AND seq = ?")
            ).fetchFirst(
                { values in
                    values.bind(scope)
                    values.bind(seq)
                }, StoreTransaction.outboxRow)
        else { throw RooftopError(.cache, "a queued change went while it was read") }
        return row
    }

    /// One queued row, by mutation ID.
    func outboxRow(_ id: MutationID) throws -> OutboxRow? {
        try StoreTransaction.outboxRow(id, scope: scope, db)
    }

    /// Whether a mutation is still queued (its row not decoded).
    func isQueued(_ id: MutationID) throws -> Bool {
        try DirectStatement(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM outbox WHERE scope = ? AND mutation_id = ?)")
        ).fetchInteger { values in
            values.bind(scope)
            values.bind(id.rawValue)
        } == 1
    }

    /// Whether a datastore is kept in sync here: it has been pulled (a checkpoint) or opened.
    /// Objects of such a datastore stay stored once their queued changes are acknowledged.
    func isSynced(_ datastore: DatastoreID) throws -> Bool {
        // Cached: an acknowledgement asks it for every mutation it settles.
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM checkpoints WHERE scope = ? AND datastore = ?)
                        OR EXISTS (SELECT 1 FROM datastores WHERE scope = ? AND id = ?)
                    """),
            arguments: [scope, datastore.rawValue, scope, datastore.rawValue]) ?? false
    }

    /// The sync scope the datastore's checkpoint covers, if recorded.
    func syncFilter(_ datastore: DatastoreID) throws -> SyncScope? {
        try String.fetchOne(
            db, sql: "SELECT filter FROM sync_filters WHERE scope = ? AND datastore = ?",
            arguments: [scope, datastore.rawValue]
        ).map { try DocumentCoding.decode(SyncScope.self, from: $0) }
    }

    /// Records (or, with `nil`, forgets) the sync scope of a datastore's checkpoint.
    func setSyncFilter(_ filter: SyncScope?, datastore: DatastoreID) throws {
        if let filter {
            try db.executeCached(
                sql: """
                    INSERT INTO sync_filters (scope, datastore, filter) VALUES (?, ?, ?)
                    ON CONFLICT(scope, datastore) DO UPDATE SET filter = excluded.filter
                    """,
                arguments: [scope, datastore.rawValue, try DocumentCoding.encode(filter)])
        } else {
            try db.executeCached(
                sql: "DELETE FROM sync_filters WHERE scope = ? AND datastore = ?", arguments: [scope, datastore.rawValue])
        }
    }

    /// The keys of a datastore's stored objects.
    func storedKeys(in datastore: DatastoreID) throws -> [ObjectKey] {
        try Row.fetchAll(
            db, sql: "SELECT class_name, object_id FROM objects WHERE scope = ? AND datastore = ?",
            arguments: [scope, datastore.rawValue]
        ).map { ObjectKey(datastore: datastore, className: $0["class_name"], objectId: $0["object_id"]) }
    }

    /// Which of `keys` are stored (deleted ones included), in one statement per class and datastore.
    /// - Throws: GRDB's errors.
    func storedKeys(_ keys: [ObjectKey]) throws -> Set<ObjectKey> {
        var found = Set<ObjectKey>()
        let groups = Dictionary(grouping: keys) { ClassInDatastore(datastore: $0.datastore, className: $0.className) }
        let statement = try db.cachedStatement(
            sql: """
                SELECT object_id FROM objects WHERE scope = ? AND datastore = ? AND class_name = ?
                AND object_id IN (SELECT value FROM json_each(?))
                """)
        for (group, members) in groups {
            // The IDs as a JSON array, written directly (`JSONEncoder` was a tenth of this read).
            var ids = DocumentWriter()
            ids.strings(members.lazy.map(\.objectId))
            let cursor = try String.fetchCursor(
                statement, arguments: [scope, group.datastore.rawValue, group.className, ids.text])
            while let id = try cursor.next() {
                found.insert(ObjectKey(datastore: group.datastore, className: group.className, objectId: id))
            }
        }
        return found
    }

    /// A class in a datastore.
    private struct ClassInDatastore: Hashable {
        var datastore: DatastoreID
        var className: String
    }

    /// The stored objects of a datastore (deleted ones included), as keys with their server state.
    func syncedObjects(in datastore: DatastoreID) throws -> [(key: ObjectKey, server: ObjectSnapshot?)] {
        try Row.fetchAll(
            db, sql: "SELECT * FROM objects WHERE scope = ? AND datastore = ?", arguments: [scope, datastore.rawValue]
        ).map { row in
            let object = try StoreTransaction.row(row)
            return (object.key, object.server)
        }
    }
}

extension LocalStore {
    /// The label that keeps the objects of a synced datastore stored (pulled, or created here and
    /// acknowledged), so that losing their `_pending` pin does not collect them.
    static let syncLabel = "_sync"

    /// One queued row, by mutation ID.
    func outboxRow(_ id: MutationID, scope: String) throws(RooftopError) -> OutboxRow? {
        try read { db in try StoreTransaction.outboxRow(id, scope: scope, db) }
    }

    /// The queued row that lists `id` among the mutations folded into it (``OutboxRow/folded``).
    /// Reads the rows that list folds (a rebase's, few), through their own index
    /// (`outbox_folding`, v18), not the queue.
    func outboxRow(folding id: MutationID, scope: String) throws(RooftopError) -> OutboxRow? {
        try read { db in
            try DirectStatement(
                db.cachedStatement(
                    sql: """
                        SELECT \(StoreTransaction.outboxColumns) FROM outbox WHERE scope = ? AND folded IS NOT NULL
                        AND EXISTS (SELECT 1 FROM json_each(outbox.folded) WHERE value = ?)
                        """)
            ).fetchFirst(
                { values in
                    values.bind(scope)
                    values.bind(id.rawValue)
                }, StoreTransaction.outboxRow)
        }
    }

    /// How many rows of a datastore are queued, and how many of them are in flight.
    func queueState(scope: String, datastore: DatastoreID) throws(RooftopError) -> (queued: Int, sent: Int) {
        try read { db in
            let row = try Row.fetchOne(
                db,
                sql: "SELECT count(*) AS queued, coalesce(sum(state = 'sent'), 0) AS sent FROM outbox WHERE scope = ? AND datastore = ?",
                arguments: [scope, datastore.rawValue])
            return (row?["queued"] ?? 0, row?["sent"] ?? 0)
        }
    }

    /// The sync scope a datastore's checkpoint covers.
    func syncFilter(scope: String, datastore: DatastoreID) throws(RooftopError) -> SyncScope? {
        try read { db in try StoreTransaction(db: db, scope: scope).syncFilter(datastore) }
    }
}

extension LocalStore {
    /// The objects of a datastore that have queued rows.
    func queuedKeys(scope: String, datastore: DatastoreID) throws(RooftopError) -> Set<ObjectKey> {
        try read { db in try StoreTransaction(db: db, scope: scope).queuedKeys(in: datastore) }
    }

    /// The queued rows of one object, in order.
    func queued(for key: ObjectKey, scope: String) throws(RooftopError) -> [OutboxRow] {
        try read { db in try StoreTransaction(db: db, scope: scope).queued(for: key) }
    }
}
