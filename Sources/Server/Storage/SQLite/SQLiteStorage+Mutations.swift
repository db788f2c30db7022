import Foundation
import GRDB
import Logging
import RooftopSQL
import RooftopSQLite
import RooftopShared

extension SQLiteStorage {
    /// See ``ObjectStorage/mutationResults(scope:ids:)``.
    public func mutationResults(scope: String, ids: [MutationID]) async throws -> [MutationID: MutationResult] {
        guard !ids.isEmpty else { return [:] }
        return try await pool.read { db in
            var found: [MutationID: MutationResult] = [:]
            let byText = Dictionary(ids.map { ($0.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
            let list = Self.jsonList(byText.keys)
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: "\(Self.recordedResultSelect) WHERE m.scope = ? AND m.mutation_id IN (SELECT value FROM json_each(?))"),
                arguments: [scope, list])
            while let row = try rows.next() {
                guard let id = byText[row["mutation_id"]] else { continue }
                found[id] = try Self.recordedResult(from: row, id: id)
            }
            // Results recorded before the compact form (schema v4) keep their old rows.
            let legacy = try Row.fetchCursor(
                db.cachedStatement(
                    sql: "SELECT mutation_id, result FROM mutations WHERE scope = ? AND mutation_id IN (SELECT value FROM json_each(?))"),
                arguments: [scope, list])
            while let row = try legacy.next() {
                guard let id = byText[row["mutation_id"]], found[id] == nil else { continue }
                found[id] = try DocumentCoding.decode(MutationResult.self, from: row["result"] as String)
            }
            return found
        }
    }

    /// See ``ObjectStorage/writeObjects(_:)``.
    ///
    /// The transaction keeps its statement journals in memory (``withJournalsInMemory(_:_:)``).
    public func writeObjects<T: Sendable>(_ body: @Sendable (any ObjectWriter) throws -> T) async throws -> T {
        let (result, writes) = try await pool.writeWithoutTransaction { db in
            try Self.withJournalsInMemory(db) {
                var outcome: (T, Int)?
                try db.inTransaction(.immediate) {
                    let writer = SQLiteObjectWriter(db: db, now: self.clock.now(), readerSetWatch: self.readerSetWatch)
                    outcome = (try body(writer), writer.tally.count)
                    return .commit
                }
                guard let outcome else { throw RooftopError(.internal, "a write transaction ended without its result") }
                return outcome
            }
        }
        noteWrites(writes)
        return result
    }

    /// Runs `body` (which opens and ends its own transaction) with the connection's temporary
    /// files in memory (`PRAGMA temp_store = MEMORY`), then with SQLite's default again.
    ///
    /// Each mutation runs in a savepoint of its push's transaction, so that a refusal undoes it
    /// alone, and SQLite keeps the pages a savepoint may restore in a statement journal, which
    /// past 64 KiB it moves to a temporary file. An object write touches more pages than that:
    /// every single create made, wrote and deleted a file (`strace` counted, per create, an
    /// `openat`, two `access`, an `unlink` and 18 of its 67 `pwrite`s), and each mutation of a
    /// push wrote its pages to that file again. In memory, the journal holds one mutation's pages
    /// at a time (SQLite empties it when the savepoint is released). Only object writes run so:
    /// a statement that changes many rows at once inside a transaction (deleting a datastore
    /// cascades to all its objects) journals every page it changes, which belongs in a file.
    /// SQLite reads the setting when a transaction starts; it cannot change inside one, and a
    /// `PRAGMA temp_store` takes effect when it is compiled, so it is not a cached statement.
    /// A failure to set it back is logged: only memory depends on it, and `body` has committed.
    static func withJournalsInMemory<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.execute(sql: "PRAGMA temp_store = MEMORY")
        let result = Result { try body() }
        do {
            try db.execute(sql: "PRAGMA temp_store = DEFAULT")
        } catch {
            Logger(label: "rooftop.storage").warning(
                "the writer's temporary files stay in memory", metadata: ["error": "\(error)"])
        }
        return try result.get()
    }

    /// A recorded result joined with the object it left, as ``recordedResult(from:id:)`` reads it.
    private static let recordedResultSelect = """
        SELECT m.mutation_id, m.version AS result_version, m.object_key AS result_object_key, m.detail, o.*,
        d.id AS datastore_id
        FROM mutation_results m LEFT JOIN objects o ON o.key = m.object_key
        LEFT JOIN datastores d ON d.key = o.datastore_key
        """

    /// Texts as one JSON array, the argument of a statement's `IN (SELECT value FROM
    /// json_each(?))`: one prepared statement for any number of names, where a list of
    /// placeholders made SQLite parse a new statement for each count.
    static func jsonList(_ texts: some Sequence<String>) -> String {
        var writer = DocumentWriter(capacity: 4096)
        writer.strings(texts)
        return writer.text
    }

    /// The first result recorded for a mutation ID, or `nil`.
    static func recordedResult(_ db: Database, scope: String, id: MutationID) throws -> MutationResult? {
        if let row = try Row.fetchOne(
            db.cachedStatement(sql: "\(recordedResultSelect) WHERE m.scope = ? AND m.mutation_id = ?"),
            arguments: [scope, id.rawValue])
        {
            return try recordedResult(from: row, id: id)
        }
        guard
            let text = try String.fetchOne(
                db.cachedStatement(sql: "SELECT result FROM mutations WHERE scope = ? AND mutation_id = ?"),
                arguments: [scope, id.rawValue])
        else { return nil }
        return try DocumentCoding.decode(MutationResult.self, from: text)
    }

    /// A result from its compact row joined with the object it left (``recordedResultSelect``).
    private static func recordedResult(from row: Row, id: MutationID) throws -> MutationResult {
        var object: ObjectSnapshot?
        if (row["result_object_key"] as Int64?) != nil, (row["key"] as Int64?) != nil, (row["deleted"] as Int64?) == 0 {
            object = try snapshot(from: row)
        }
        return try MutationResultRow.result(
            id: id, version: row["result_version"], detail: row["detail"], object: object)
    }
}

/// The ``ObjectWriter`` of one SQLite write transaction: each write in a savepoint, through the
/// shared ``ObjectWriteFlow``. SQLite's single writer serializes transactions, so reading the
/// datastore needs no lock.
struct SQLiteObjectWriter: ObjectWriter, ObjectWriteBackend {
    let db: Database
    /// The time of the transaction, which its results are recorded at.
    let now: Timestamp
    /// How many writes were made.
    let tally = Tally()
    /// Where the sets writes name are noted while a sweep runs (``SQLiteStorage/sweepReaderSets()``).
    var readerSetWatch: ReaderSetWatch?

    /// The classes' row-keeping states (``RowFields``) read in this transaction: a push writes
    /// hundreds of objects of one class. (A declaration changes them in a transaction of its own.)
    let rowStates = RowStates()
    /// What a push's writes were found not to have, and its datastores (``ReadAhead``).
    let readAhead = ReadAhead()

    /// A count kept across the writer's copies.
    final class Tally {
        var count = 0
    }

    /// The row-keeping states read so far, kept across the writer's copies.
    final class RowStates {
        private var states: [String: RowFields] = [:]

        /// The state of `className`, read by `read` the first time.
        func state(of className: String, read: () throws -> RowFields) rethrows -> RowFields {
            if let known = states[className] { return known }
            let state = try read()
            states[className] = state
            return state
        }
    }

    func write(
        _ request: ObjectWriteRequest, decide: (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) throws -> ObjectWriteOutcome {
        tally.count += 1
        var outcome: ObjectWriteOutcome?
        do {
            outcome = try db.inPreparedSavepoint { try ObjectWriteFlow.write(self, request, at: now, decide: decide) }
        } catch {
            readAhead.rolledBack()
            throw error
        }
        guard let outcome else { throw RooftopError(.internal, "a write ended without an outcome") }
        return outcome
    }

    func record(_ result: MutationResult, scope: String) throws -> MutationResult {
        try ObjectWriteFlow.record(self, result, scope: scope, at: now)
    }

    /// No locks (one writer at a time): reads ahead what the writes will look up (``ReadAhead``).
    func lock(_ requests: [ObjectWriteRequest]) throws {
        try readAhead.read(requests, db)
    }

    // MARK: ObjectWriteBackend

    func rowFields(className: String, objectKey: Int64?) throws -> Set<String>? {
        let state = try rowStates.state(of: className) { try SQLiteStorage.rowFields(of: className, db) }
        return state.kept(objectKey: objectKey)
    }

    func datastoreForWrite(_ request: ObjectWriteRequest) throws -> DatastoreRecord? {
        try readAhead.datastore(request.datastoreKey) {
            try SQLiteStorage.datastore(db, where: "key = ?", arguments: [request.datastoreKey])
        }
    }

    func nextSequence(after datastore: DatastoreRecord, replacing current: StoredObject?) -> Int64 {
        // The one writer: each change updates the datastore's row, read again by the next.
        datastore.sequence + 1
    }

    func recordedResult(scope: String, id: MutationID) throws -> MutationResult? {
        if readAhead.isUnrecorded(scope: scope, id: id) { return nil }
        return try SQLiteStorage.recordedResult(db, scope: scope, id: id)
    }

    func object(datastoreKey: Int64, className: String, objectId: String) throws -> (key: Int64, object: StoredObject)? {
        if readAhead.isAbsent(datastoreKey: datastoreKey, className: className, objectId: objectId) { return nil }
        return try SQLiteStorage.object(db, datastoreKey: datastoreKey, className: className, objectId: objectId)
    }

    func operations(objectKey: Int64, after version: Int64) throws -> [OperationRecord] {
        try String.fetchAll(
            db.cachedStatement(
                sql: "SELECT operation FROM object_operations WHERE object_key = ? AND version > ? ORDER BY version"),
            arguments: [objectKey, version]
        ).map { try StoredOperation.record(from: $0) }
    }

    func forEachOperationNewestFirst(objectKey: Int64, _ body: (OperationRecord) throws -> Bool) throws {
        let cursor = try String.fetchCursor(
            db.cachedStatement(sql: "SELECT operation FROM object_operations WHERE object_key = ? ORDER BY version DESC"),
            arguments: [objectKey])
        while let text = try cursor.next() {
            guard try body(try StoredOperation.record(from: text)) else { return }
        }
    }

    func insertResult(_ row: MutationResultRow) throws {
        readAhead.recording(scope: row.scope, id: row.mutationId)
        try DirectStatement(
            db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO mutation_results (scope, mutation_id, version, object_key, detail, created_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """)
        ).execute { values in
            values.bind(row.scope)
            values.bind(row.mutationId)
            values.bind(row.version)
            values.bind(row.objectKey)
            values.bind(row.detail)
            values.bind(row.createdAt)
        }
    }

    /// Writes what the readers' history (`object_readers`) must change for `plan`
    /// (``ReaderHistoryWrite``, the rule both backends follow: since schema v15 the history holds
    /// only what the reader set does not tell). Creating an object readable by some users or
    /// roles writes no row at all: with four readers its history rows and their index were
    /// eight of the B-tree entries a creation wrote, and 15% of a push of creations' time
    /// (docs/benchmarks.md). `from_sequence` is the change that wrote the row (before v15, the
    /// change that granted the access); no read depends on it: the feed reads who, and access
    /// at a checkpoint is read from objects unchanged since it
    /// (``SQLiteStorage/lostAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:)``).
    private func storeReaderHistory(_ plan: ObjectStorePlan, objectKey key: Int64) throws {
        let history = plan.readerHistory
        guard !history.isEmpty else { return }
        let insert = try DirectStatement(
            db.cachedStatement(
                sql: "INSERT INTO object_readers (object_key, principal, from_sequence, to_sequence) VALUES (?, ?, ?, ?)"))
        func row(_ principal: String, ended: Bool) throws {
            try insert.execute { values in
                values.bind(key)
                values.bind(principal)
                values.bind(plan.sequence)
                values.bind(ended ? plan.sequence : nil)
            }
        }
        for principal in history.closed {
            try db.cachedStatement(
                sql: "UPDATE object_readers SET to_sequence = ? WHERE object_key = ? AND principal = ? AND to_sequence IS NULL"
            ).execute(arguments: [plan.sequence, key, principal])
        }
        for principal in history.ended { try row(principal, ended: true) }
        for principal in history.dropped {
            try db.cachedStatement(
                sql: "DELETE FROM object_readers WHERE object_key = ? AND principal = ? AND to_sequence IS NULL"
            ).execute(arguments: [key, principal])
        }
        for principal in history.opened { try row(principal, ended: false) }
    }

    /// Writes what `plan` says. Its statements are bound directly (``DirectStatement``): a push
    /// runs them for every mutation, and GRDB's boxing of each argument was a twentieth of it.
    func store(_ plan: ObjectStorePlan) throws -> Int64 {
        let flagsChange = plan.flagsChange || plan.existingKey == nil
        let readers = try plan.readerSet.flatMap { readers throws in
            flagsChange ? try readAhead.readerSet(readers) { try SQLiteStorage.readerSetID(readers, db) } : nil
        }
        if let readers { readerSetWatch?.note(readers) }
        let bindState = { (values: inout DirectStatement.Binder) in
            values.bind(plan.body)
            values.bind(plan.createdAt)
            values.bind(plan.updatedAt)
            values.bind(plan.version)
            values.bind(plan.sequence)
            values.bind(plan.size)
            if flagsChange {
                values.bind(plan.deleted)
                values.bind(readers)
            }
        }
        let key: Int64
        if let existing = plan.existingKey {
            key = existing
            // A column named in `SET` makes SQLite rewrite the indexes holding it (or testing it,
            // as the partial ones on `deleted` do), changed or not: the flags only when they change.
            let sql =
                plan.flagsChange
                ? """
                UPDATE objects SET body = ?, created_at = ?, updated_at = ?, version = ?, sequence = ?,
                size_bytes = ?, deleted = ?, readers = ? WHERE key = ?
                """
                : """
                UPDATE objects SET body = ?, created_at = ?, updated_at = ?, version = ?, sequence = ?,
                size_bytes = ? WHERE key = ?
                """
            try DirectStatement(db.cachedStatement(sql: sql)).execute { values in
                bindState(&values)
                values.bind(key)
            }
        } else {
            readAhead.storing(datastoreKey: plan.datastoreKey, className: plan.className, objectId: plan.objectId)
            try DirectStatement(
                db.cachedStatement(
                    sql: """
                        INSERT INTO objects (body, created_at, updated_at, version, sequence, size_bytes, deleted,
                        readers, datastore_key, class_name, object_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """)
            ).execute { values in
                bindState(&values)
                values.bind(plan.datastoreKey)
                values.bind(plan.className)
                values.bind(plan.objectId)
            }
            key = db.lastInsertedRowID
            // Kept as for an object the rebuild has not reached; behind it (a key used again), it
            // also needs the rows the rebuild adds (``SQLiteStorage/addRows(of:beyond:className:objectKey:datastoreKey:_:)``).
            let state = try rowStates.state(of: plan.className) { try SQLiteStorage.rowFields(of: plan.className, db) }
            if !plan.deleted, let rebuiltTo = state.rebuiltTo, key <= rebuiltTo {
                try SQLiteStorage.addRows(
                    of: plan.stored.snapshot, beyond: state, className: plan.className, objectKey: key,
                    datastoreKey: plan.datastoreKey, db)
            }
        }
        for removed in plan.removedFields {
            try db.cachedStatement(sql: "DELETE FROM object_fields WHERE object_key = ? AND field = ?")
                .execute(arguments: [key, removed.field])
            if removed.elements {
                try db.cachedStatement(sql: "DELETE FROM object_elements WHERE object_key = ? AND field = ?")
                    .execute(arguments: [key, removed.field])
            }
        }
        if plan.deleted, plan.existingKey != nil,
            try rowStates.state(of: plan.className, read: { try SQLiteStorage.rowFields(of: plan.className, db) })
                .rebuiltTo != nil
        {
            // A tombstone keeps no rows. While a rebuild is under way, an object it has not
            // reached still has rows of fields the class no longer keeps, which the plan leaves
            // (it removes the kept ones); the rebuild would remove them when it passes, and their
            // counts of unindexed values went when the fields left. Until then they would stand
            // for a deleted object (``SQLiteStorage/valueIndexFaults(_:)``).
            for table in SQLiteStorage.valueRowTables {
                try db.cachedStatement(sql: "DELETE FROM \(table) WHERE object_key = ?").execute(arguments: [key])
            }
        }
        if !plan.addedFields.isEmpty {
            let partition = try readAhead.partition(datastoreKey: plan.datastoreKey, className: plan.className) {
                try SQLiteStorage.partition(datastoreKey: plan.datastoreKey, className: plan.className, db)
            }
            try SQLiteStorage.insertRows(
                plan.addedFields, objectKey: key, datastoreKey: plan.datastoreKey, className: plan.className,
                partition: partition, db)
        }
        try SQLiteStorage.countUnindexed(plan.unindexed, datastoreKey: plan.datastoreKey, className: plan.className, db)
        try storeReaderHistory(plan, objectKey: key)
        try DirectStatement(
            db.cachedStatement(
                sql: "INSERT OR REPLACE INTO object_operations (object_key, version, operation, sequence) VALUES (?, ?, ?, ?)")
        ).execute { values in
            values.bind(key)
            values.bind(plan.operationVersion)
            values.bind(plan.operation)
            values.bind(plan.sequence)
        }
        try DirectStatement(
            db.cachedStatement(
                sql: "UPDATE datastores SET sequence = ?, record_count = record_count + ?, size_bytes = size_bytes + ? WHERE key = ?")
        ).execute { values in
            values.bind(plan.sequence)
            values.bind(plan.countDelta)
            values.bind(plan.sizeDelta)
            values.bind(plan.datastoreKey)
        }
        readAhead.stored(
            datastoreKey: plan.datastoreKey, sequence: plan.sequence, countDelta: plan.countDelta, sizeDelta: plan.sizeDelta)
        return key
    }
}

extension ObjectRow {
    /// The row `SELECT o.*, d.id AS datastore_id …` reads.
    init(_ row: Row) {
        self.init(
            key: row["key"], className: row["class_name"], objectId: row["object_id"], datastoreId: row["datastore_id"],
            body: row["body"], createdAt: row["created_at"], updatedAt: row["updated_at"], version: row["version"],
            sequence: row["sequence"], deleted: (row["deleted"] as Int64) != 0)
    }

    /// The columns ``init(positional:)`` reads, in its order, of `objects o` joined with
    /// `datastores d`.
    static let positionalColumns =
        "o.key, o.class_name, o.object_id, d.id, o.body, o.created_at, o.updated_at, o.version, o.sequence, o.deleted"

    /// The row `SELECT` ``positionalColumns`` reads, by position (no lookup by name per value),
    /// straight from SQLite (``CurrentRow``).
    /// - Throws: `DatabaseError` for a required column that is `NULL` (a damaged row).
    init(positional row: CurrentRow) throws {
        self.init(
            key: try row.int64(0), className: try row.text(1), objectId: try row.text(2), datastoreId: try row.text(3),
            body: try row.text(4), createdAt: row.optionalInt64(5), updatedAt: row.optionalInt64(6),
            version: try row.int64(7), sequence: try row.int64(8), deleted: try row.int64(9) != 0)
    }
}
