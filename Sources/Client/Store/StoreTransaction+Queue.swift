import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared

/// The offline queue inside a store transaction: queued rows, their states and answers, and the
/// refusals set aside for the app.
extension StoreTransaction {
    /// Appends a mutation to the queue.
    @discardableResult
    func enqueue(_ mutation: Mutation) throws -> Int64 {
        let document = try mutation.encodedDocument()
        // Bound directly (``DirectStatement``): every queued save runs it.
        try DirectStatement(
            db.cachedStatement(
                sql: """
                    INSERT INTO outbox (scope, mutation_id, datastore, class_name, object_id, mutation, state, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """)
        ).execute { values in
            values.bind(scope)
            values.bind(mutation.mutationId.rawValue)
            values.bind(mutation.datastore.rawValue)
            values.bind(mutation.className)
            values.bind(mutation.objectId)
            values.bind(document)
            values.bind(OutboxState.pending.rawValue)
            values.bind(Timestamp.now.millisecondsSinceEpoch)
        }
        change.outbox = true
        change.datastores.insert(mutation.datastore)
        return db.lastInsertedRowID
    }

    /// The queued mutations of one object, in order: read directly (``DirectStatement``), as
    /// every queued save and every acknowledgement reads them.
    func queued(for key: ObjectKey) throws -> [OutboxRow] {
        try DirectStatement(
            db.cachedStatement(
                sql: """
                    SELECT \(StoreTransaction.outboxColumns) FROM outbox
                    WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id = ? ORDER BY seq
                    """)
        ).fetchAll({ $0.bind(scope: scope, key) }, StoreTransaction.outboxRow)
    }

    /// The objects of a datastore with queued mutations.
    func queuedKeys(in datastore: DatastoreID) throws -> Set<ObjectKey> {
        Set(
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT DISTINCT datastore, class_name, object_id FROM outbox WHERE scope = ? AND datastore = ?"),
                arguments: [scope, datastore.rawValue]
            ).compactMap(StoreTransaction.key))
    }

    /// Marks mutations as handed to the network (before the request is made).
    func markSent(_ ids: [MutationID]) throws {
        let update = DirectStatement(
            try db.cachedStatement(sql: "UPDATE outbox SET state = ? WHERE scope = ? AND mutation_id = ?"))
        for id in ids {
            try update.execute { values in
                values.bind(OutboxState.sent.rawValue)
                values.bind(scope)
                values.bind(id.rawValue)
            }
        }
        change.outbox = true
    }

    /// Puts a mutation back in the queue after a passing failure.
    func markPending(_ id: MutationID, error: RooftopError?, nextAttemptAt: Int64?, countAttempt: Bool) throws {
        try db.executeCached(
            sql: """
                UPDATE outbox SET state = ?, attempts = attempts + ?, last_error = ?, next_attempt_at = ?
                WHERE scope = ? AND mutation_id = ?
                """,
            arguments: [
                OutboxState.pending.rawValue, countAttempt ? 1 : 0, try error.map(DocumentCoding.encode), nextAttemptAt,
                scope, id.rawValue,
            ])
        change.outbox = true
    }

    /// Removes an acknowledged mutation from the queue.
    func removeFromQueue(_ id: MutationID) throws {
        try DirectStatement(db.cachedStatement(sql: "DELETE FROM outbox WHERE scope = ? AND mutation_id = ?")).execute {
            values in
            values.bind(scope)
            values.bind(id.rawValue)
        }
        change.outbox = true
    }

    /// Replaces a queued mutation (after a rebase over pulled changes), keeping its place.
    func replaceQueued(_ id: MutationID, with mutation: Mutation) throws {
        try db.executeCached(
            sql: "UPDATE outbox SET mutation = ? WHERE scope = ? AND mutation_id = ?",
            arguments: [try mutation.encodedDocument(), scope, id.rawValue])
        change.outbox = true
    }

    /// Sets the mutations folded into a queued one (``OutboxRow/folded``).
    func setFolded(_ id: MutationID, _ folded: [MutationID]) throws {
        try db.executeCached(
            sql: "UPDATE outbox SET folded = ? WHERE scope = ? AND mutation_id = ?",
            arguments: [folded.isEmpty ? nil : try DocumentCoding.encode(folded), scope, id.rawValue])
        change.outbox = true
    }

    /// Moves a refused mutation out of the queue into the set-aside list, with the mutations a
    /// rebase folded into it (`folded`, refused with it).
    func reject(_ mutation: Mutation, error: RooftopError, localState: ObjectSnapshot?, folded: [MutationID] = []) throws {
        try removeFromQueue(mutation.mutationId)
        try db.executeCached(
            sql: """
                INSERT OR REPLACE INTO rejected (mutation_id, scope, mutation, error, local_state, rejected_at, folded)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                mutation.mutationId.rawValue, scope, try DocumentCoding.encode(mutation), try DocumentCoding.encode(error),
                try localState.map(DocumentCoding.encode), Timestamp.now.millisecondsSinceEpoch,
                folded.isEmpty ? nil : try DocumentCoding.encode(folded),
            ])
    }

    /// Forgets a set-aside refusal.
    func removeRejected(_ id: MutationID) throws {
        try db.executeCached(sql: "DELETE FROM rejected WHERE scope = ? AND mutation_id = ?", arguments: [scope, id.rawValue])
        change.outbox = true
    }
}
