import RooftopShared
import RooftopSQL

/// The reads and writes one object write makes, each in a backend's own SQL, inside the write
/// transaction. ``ObjectWriteFlow`` drives them, so both backends make the same decisions in the
/// same order; only the statements differ.
protocol ObjectWriteBackend {
    /// The datastore of a write, read for it, with the counters this transaction's earlier writes
    /// leave it. Where writers run concurrently (PostgreSQL), the object is locked first until
    /// the transaction ends, so that writes of one object take turns (and a retry of a mutation
    /// waits for its first attempt, then finds its result). `nil` when it does not exist.
    func datastoreForWrite(_ request: ObjectWriteRequest) throws -> DatastoreRecord?

    /// The sequence number of the datastore's next change in this transaction, which replaces
    /// `current` (the object as stored, if any): the datastore's next where its one writer
    /// numbers changes as it makes them (SQLite), or the next of its transaction's own range
    /// (PostgreSQL, ``PostgresStatements/FeedBase``).
    /// - Throws: Where writers run at once, when `current` was written by a transaction numbered
    ///   after this one (the write must be retried in a new transaction); what the database throws.
    func nextSequence(after datastore: DatastoreRecord, replacing current: StoredObject?) throws -> Int64

    /// The first result recorded for a mutation ID, or `nil`.
    func recordedResult(scope: String, id: MutationID) throws -> MutationResult?

    /// The object (or its tombstone) with its row key, or `nil`.
    func object(datastoreKey: Int64, className: String, objectId: String) throws -> (key: Int64, object: StoredObject)?

    /// The object's operations after `version`, oldest first.
    func operations(objectKey: Int64, after version: Int64) throws -> [OperationRecord]

    /// Calls `body` with the object's operations, newest first, until it returns `false`.
    func forEachOperationNewestFirst(objectKey: Int64, _ body: (OperationRecord) throws -> Bool) throws

    /// Inserts a mutation's result unless one is recorded already for its ID (or keeps it, to
    /// be inserted with the transaction's other rows, on a backend that writes a push as a batch).
    func insertResult(_ row: MutationResultRow) throws

    /// The fields of `className` whose index rows the store keeps for the object with row key
    /// `objectKey` (`nil`: a new object): `nil` for every field (``RowFields``). Which built-in
    /// fields have rows is ``RowFields/builtInRows(kept:)``'s to say.
    func rowFields(className: String, objectKey: Int64?) throws -> Set<String>?

    /// Writes what `plan` says (object row, index rows, readers, operation, counters), or keeps
    /// it to be written with the transaction's other rows; returns the object's row key (for a
    /// new object kept, a placeholder the backend replaces in the rows that name it).
    func store(_ plan: ObjectStorePlan) throws -> Int64
}

/// One object write, the same on every backend (see ``ObjectWriter/write(_:decide:)``).
enum ObjectWriteFlow {
    /// Runs one mutation: replays its recorded result, or reads what `decide` needs, calls it and
    /// stores (and records) what it decided.
    /// - Throws: `notFound` when the datastore is gone; what the backend throws.
    static func write(
        _ backend: some ObjectWriteBackend, _ request: ObjectWriteRequest, at time: Timestamp,
        decide: (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) throws -> ObjectWriteOutcome {
        // The datastore first: on a backend with concurrent writers the object's lock makes a
        // concurrent attempt of the same mutation commit (and record its result) before this one
        // looks.
        let datastore = try backend.datastoreForWrite(request)
        if let mutation = request.mutation, let recorded = try backend.recordedResult(scope: mutation.scope, id: mutation.id) {
            return .replayed(recorded)
        }
        guard let datastore else { throw RooftopError(.notFound, "the datastore no longer exists") }
        let existing = try backend.object(
            datastoreKey: request.datastoreKey, className: request.className, objectId: request.objectId)
        var concurrent: [OperationRecord] = []
        var historyExpired = false
        if let existing, let base = request.baseVersion, base < existing.object.snapshot.version {
            concurrent = try backend.operations(objectKey: existing.key, after: base)
            historyExpired = !OperationRecord.complete(concurrent, after: base, through: existing.object.snapshot.version)
        } else if let existing, existing.object.isDeleted, request.baseVersion == nil {
            concurrent = try deletedIncarnation(backend, objectKey: existing.key)
        } else if existing == nil, request.baseVersion != nil, datastore.historyFrom > 0 {
            // Based on a version of an object that is not stored: its tombstone may have been swept.
            historyExpired = true
        }
        let context = ObjectWriteContext(
            datastore: datastore, current: existing?.object, concurrentChanges: concurrent,
            historyExpired: historyExpired)
        let decision: ObjectWriteDecision
        do throws(RooftopError) {
            decision = try decide(context)
        } catch {
            decision = .reject(error)
        }
        switch decision {
        case .reject(let error):
            if let mutation = request.mutation {
                try backend.insertResult(
                    MutationResultRow(
                        scope: mutation.scope, result: .rejected(mutationId: mutation.id, error: error), objectKey: nil,
                        at: time))
            }
            return .rejected(error)
        case .unchanged(let version, let object, let merges):
            let result = MutationResult.applied(
                mutationId: request.mutation?.id ?? MutationID.generate(), version: version, object: object,
                merges: merges)
            if let mutation = request.mutation {
                try backend.insertResult(
                    MutationResultRow(scope: mutation.scope, result: result, objectKey: existing?.key, at: time))
            }
            return .unchanged(result)
        case .write(let snapshot, let deleted, let operation, let merges):
            let rowFields = try backend.rowFields(className: snapshot.className, objectKey: existing?.key)
            let plan = try ObjectStorePlan(
                snapshot: snapshot, deleted: deleted, operation: operation, sequence: backend.nextSequence(after: datastore, replacing: existing?.object),
                datastoreKey: datastore.key, existing: existing, rowFields: rowFields,
                builtInRows: RowFields.builtInRows(kept: rowFields))
            let objectKey = try backend.store(plan)
            let result = MutationResult.applied(
                mutationId: request.mutation?.id ?? MutationID.generate(), version: snapshot.version,
                object: deleted ? nil : snapshot, merges: merges)
            if let mutation = request.mutation {
                try backend.insertResult(
                    MutationResultRow(scope: mutation.scope, result: result, objectKey: objectKey, at: time))
            }
            return .written(plan.stored, readersBefore: existing?.object.readers ?? [], result: result)
        }
    }

    /// Records a refusal decided before the transaction (see ``ObjectWriter/record(_:scope:)``):
    /// the result recorded first stands.
    static func record(
        _ backend: some ObjectWriteBackend, _ result: MutationResult, scope: String, at time: Timestamp
    ) throws -> MutationResult {
        if let recorded = try backend.recordedResult(scope: scope, id: result.mutationId) { return recorded }
        try backend.insertResult(MutationResultRow(scope: scope, result: result, objectKey: nil, at: time))
        // A concurrent transaction may have recorded one between the read and the insert.
        return try backend.recordedResult(scope: scope, id: result.mutationId) ?? result
    }

    /// The operations of a deleted object's last incarnation, oldest first: from the change that
    /// created it (the first operation, or the first after an earlier delete) through the delete.
    /// Empty when that history is not complete.
    static func deletedIncarnation(_ backend: some ObjectWriteBackend, objectKey: Int64) throws -> [OperationRecord] {
        var found: [OperationRecord] = []
        var complete = false
        var gap = false
        try backend.forEachOperationNewestFirst(objectKey: objectKey) { record in
            if let later = found.first, record.version != later.version - 1 {
                gap = true
                return false
            }
            if !found.isEmpty, case .delete = record.change {
                complete = true
                return false
            }
            found.insert(record, at: 0)
            return true
        }
        if gap { return [] }
        return complete || found.first?.version == 1 ? found : []
    }
}

/// A mutation's result as stored, in its compact form: the version, the key of the object it
/// left (`nil` when the result has no object) and its merges or error.
struct MutationResultRow {
    var scope: String
    var mutationId: String
    var version: Int64?
    var objectKey: Int64?
    var detail: String?
    var createdAt: Int64

    /// The row of `result`.
    /// - Throws: What encoding the merges or error throws.
    init(scope: String, result: MutationResult, objectKey: Int64?, at time: Timestamp) throws {
        self.scope = scope
        mutationId = result.mutationId.rawValue
        createdAt = time.millisecondsSinceEpoch
        switch result {
        case .applied(_, let applied, let object, let merges):
            version = applied
            detail = merges.isEmpty ? nil : try DocumentCoding.encode(merges)
            self.objectKey = object == nil ? nil : objectKey
        case .rejected(_, let error):
            detail = try DocumentCoding.encode(error)
        }
    }

    /// The result a stored row (`version`, `detail`) stands for. An applied result that left an
    /// object answers with the object's current state when it is live (`object`: the state the
    /// mutation produced, or a later one; its `version` stays the mutation's, so the client
    /// rebases what it queued since on the right version). A result that left no object, or
    /// whose object has been deleted since, answers without one.
    /// - Throws: `internal` for a refusal without its error; what decoding throws.
    static func result(id: MutationID, version: Int64?, detail: String?, object: ObjectSnapshot?) throws
        -> MutationResult
    {
        guard let version else {
            guard let detail else { throw RooftopError(.internal, "a refused mutation's record has no error") }
            return .rejected(mutationId: id, error: try DocumentCoding.decode(RooftopError.self, from: detail))
        }
        let merges = try detail.map { try DocumentCoding.decode([MergeDecision].self, from: $0) } ?? []
        return .applied(mutationId: id, version: version, object: object, merges: merges)
    }
}

/// Everything one object write stores, computed once for both backends: the object row, the
/// index rows that change, the reader history, the operation logged and the datastore's counters.
struct ObjectStorePlan {
    var datastoreKey: Int64
    var className: String
    var objectId: String
    /// The existing row's key; `nil` inserts a new row.
    var existingKey: Int64?
    /// The body (``StoredObjectBody``) as stored.
    var body: String
    var createdAt: Int64?
    var updatedAt: Int64?
    var version: Int64
    var sequence: Int64
    var deleted: Bool
    var size: Int64
    /// Index rows to delete (with their element rows when `elements`).
    var removedFields: [(field: String, elements: Bool)]
    var addedFields: [SQLIndexRows.FieldRow]
    /// Changes to the count of objects per field whose values the index does not fully store.
    var unindexed: [(field: String, delta: Int64)]
    /// What the write changes in the readers' history (``ReaderHistoryWrite``).
    var readerHistory: ReaderHistoryWrite
    /// The reader set queries file it under (`objects.readers`, ``SQLIndexRows/readerSet(of:)``):
    /// `nil` for a tombstone and for an object nobody may read.
    var readerSet: Set<String>?
    /// Whether the row's tombstone flag or reader set changes (always for a new row): when
    /// neither does, a backend may leave them, and the indexes that hold them, as they are.
    var flagsChange: Bool
    /// The operation's version and its logged form.
    var operationVersion: Int64
    var operation: String
    /// Whether the row held a live object before this write (not a tombstone, not absent).
    var wasLive: Bool
    /// Changes to the datastore's live record count and size.
    var countDelta: Int64
    var sizeDelta: Int64
    /// The object as stored, for the write's outcome.
    var stored: StoredObject

    /// The plan of writing `snapshot` (a tombstone when `deleted`) over `existing` at `sequence`.
    /// - Parameter rowFields: The fields whose index rows the store keeps for this object
    ///   (``ObjectWriteBackend/rowFields(className:objectKey:)``); `nil` (the default) for every
    ///   field. Rows of other fields are neither written nor removed.
    /// - Parameter builtInRows: The built-in fields with rows (all by default,
    ///   ``RowFields/builtInRows(kept:)``).
    /// - Throws: What encoding the body or operation throws.
    init(
        snapshot: ObjectSnapshot, deleted: Bool, operation: OperationRecord, sequence: Int64, datastoreKey: Int64,
        existing: (key: Int64, object: StoredObject)?, rowFields: Set<String>? = nil,
        builtInRows: Set<String> = SQLIndexRows.builtInFields
    ) throws {
        let body = StoredObjectBody(
            fields: deleted ? [:] : snapshot.fields, acl: snapshot.acl, fieldVersions: snapshot.fieldVersions)
        self.datastoreKey = datastoreKey
        className = snapshot.className
        objectId = snapshot.objectId
        existingKey = existing?.key
        self.body = try body.encodedDocument()
        createdAt = snapshot.createdAt?.millisecondsSinceEpoch
        updatedAt = snapshot.updatedAt?.millisecondsSinceEpoch
        version = snapshot.version
        self.sequence = sequence
        self.deleted = deleted
        let size = deleted ? 0 : Int64(SizeAccounting.recordSize(snapshot))
        self.size = size

        let previous = existing.flatMap { $0.object.isDeleted ? nil : $0.object.snapshot }
        let rows = SQLIndexRows.diff(
            snapshot: deleted ? nil : SQLIndexRows.keeping(rowFields, of: snapshot),
            previous: previous.map { SQLIndexRows.keeping(rowFields, of: $0) }, builtIns: builtInRows)
        (removedFields, addedFields, unindexed) = (rows.removed, rows.added, rows.unindexed)

        // A tombstone keeps the readers of the last version: they are who is told of the delete.
        let before = existing?.object.readers ?? []
        let readers: Set<String> = deleted ? before : StoredObject.readers(of: snapshot.acl)
        let wasLive = existing.map { !$0.object.isDeleted } ?? false
        readerHistory = ReaderHistoryWrite(
            before: before, after: readers, existed: existing != nil, wasLive: wasLive, deleted: deleted)
        readerSet = deleted ? nil : SQLIndexRows.readerSet(of: readers)
        let readersChange = before != readers
        flagsChange = existing.map { $0.object.isDeleted != deleted || readersChange } ?? true

        var logged = operation
        let firstCreation: Bool
        if existing == nil, case .update = operation.change {
            // The object's first creation: nothing merges over it (no base version precedes it),
            // and whose incarnation it began is told by its origin; its prior values name the
            // fields it created. Its updates and ACL, the whole record again, are not kept, and
            // it is stored in its short form (``StoredOperation``).
            logged.change = .update([])
            firstCreation = true
        } else {
            firstCreation = false
        }
        operationVersion = operation.version
        self.operation = try StoredOperation.text(logged, firstCreation: firstCreation)

        self.wasLive = wasLive
        let previousSize = wasLive ? (existing.map { Int64(SizeAccounting.recordSize($0.object.snapshot)) } ?? 0) : 0
        countDelta = (deleted ? 0 : 1) - (wasLive ? 1 : 0)
        sizeDelta = size - previousSize
        stored = StoredObject(snapshot: snapshot, isDeleted: deleted, sequence: sequence, readers: readers)
    }
}

/// What one write changes in the readers' history (`object_readers`), the same rule on both
/// backends. A live object's current readers are its reader set (`objects.readers`), so the
/// history keeps only what the set does not tell: access that ended (rows with a `to_sequence`),
/// a tombstone's readers (rows without an end), and the readers of an object everyone may read
/// besides `*` (its set is `*` alone: rows without an end, ``SQLIndexRows/readersBeyondSet(_:)``),
/// so that a caller who does not hold `*` is answered exactly too. A creation readable by a few
/// principals writes no rows at all (SQLite schema v15, PostgreSQL v10).
///
/// The four lists are disjoint: a principal's open row is ended (``closed``) or deleted
/// (``dropped``) only when it exists, and the rows inserted (``ended``, ``opened``) name
/// principals without one, so one statement may apply them all.
struct ReaderHistoryWrite: Equatable {
    /// Principals whose open row ends at the write's sequence (`to_sequence` set).
    var closed: [String]
    /// Principals whose access ends here without an open row: a row inserted already ended
    /// (`from_sequence` and `to_sequence` both the write's sequence).
    var ended: [String]
    /// Principals whose open row is deleted: they go on reading, now named by the set.
    var dropped: [String]
    /// Principals given an open row from the write's sequence on.
    var opened: [String]

    /// Nothing to write.
    var isEmpty: Bool { closed.isEmpty && ended.isEmpty && dropped.isEmpty && opened.isEmpty }

    /// The change from `before` (the stored object's readers: a tombstone's are its last
    /// version's; none when `existed` is false) to `after` (a tombstone's: `before`).
    init(before: Set<String>, after: Set<String>, existed: Bool, wasLive: Bool, deleted: Bool) {
        // The rows without an end before and after the write.
        let openBefore: Set<String> =
            !existed ? [] : wasLive ? SQLIndexRows.readersBeyondSet(before) : before
        let openAfter = deleted ? after : SQLIndexRows.readersBeyondSet(after)
        let lost = before.subtracting(after)
        closed = lost.intersection(openBefore).sorted()
        ended = lost.subtracting(openBefore).sorted()
        dropped = openBefore.intersection(after).subtracting(openAfter).sorted()
        opened = openAfter.subtracting(openBefore).sorted()
    }
}

/// An `objects` row (joined with its datastore's ID), as both backends read it.
struct ObjectRow {
    var key: Int64
    var className: String
    var objectId: String
    var datastoreId: String
    var body: String
    var createdAt: Int64?
    var updatedAt: Int64?
    var version: Int64
    var sequence: Int64
    var deleted: Bool

    /// The object the row holds, without its readers: what a query answers.
    /// - Throws: What decoding the body or the datastore ID throws.
    func snapshot() throws -> ObjectSnapshot {
        try feedObject(current: [], former: []).snapshot()
    }

    /// The row as the change feed reads it, its body not decoded: `current` can read it now,
    /// `former` could read some version.
    func feedObject(current: Set<String>, former: Set<String>) -> FeedObject {
        FeedObject(
            className: className, objectId: objectId, datastoreId: datastoreId, body: body, createdAt: createdAt,
            updatedAt: updatedAt, version: version, isDeleted: deleted, sequence: sequence, readers: current,
            formerReaders: former)
    }

    /// The object with its readers: `current` can read it now, `former` could read some version.
    /// - Throws: What ``snapshot()`` throws.
    func stored(current: Set<String>, former: Set<String>) throws -> StoredObject {
        StoredObject(snapshot: try snapshot(), isDeleted: deleted, sequence: sequence, readers: current, formerReaders: former)
    }
}
