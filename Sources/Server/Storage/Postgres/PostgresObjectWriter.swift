import NIOCore
import PostgresNIO
import RooftopSQL
import RooftopShared

/// The ``ObjectWriter`` of one PostgreSQL transaction: each write through the shared
/// ``ObjectWriteFlow``, its object locked until commit, reading what was read ahead for the push
/// and keeping its rows in memory until the batch is written (``Batch``); the changes are
/// numbered in the transaction's own range (``PostgresStatements/FeedBase``) and the datastores'
/// counters written at its end (``settle()``).
struct PostgresObjectWriter: ObjectWriter, ObjectWriteBackend {
    let session: PostgresBlockingSession
    /// The time of the transaction, which its results are recorded at.
    let now: Timestamp
    /// Whether the transaction excludes the other writers of its datastores (see
    /// ``PostgresStorage/writeObjects(_:)``).
    let alone: Bool
    /// The writes made, as messages to the other server processes.
    let changes = Changes()
    /// What the transaction's writes add to their datastores, written by ``settle()``.
    let pending = Pending()
    /// The seed of the objects' lock keys (``Locks``).
    let lockSeed: Int64
    /// The transaction's share of the process's lock budget (``PostgresLockBudget``).
    let permits: PostgresLockBudget.Permits?
    /// The reader sets the process has found committed.
    let readerSetCache: PostgresReaderSetCache?
    /// What the transaction's writes read ahead, and their rows until they are written.
    let batch = Batch()

    init(
        session: PostgresBlockingSession, now: Timestamp, alone: Bool = false, lockSeed: Int64 = 0,
        permits: PostgresLockBudget.Permits? = nil, readerSetCache: PostgresReaderSetCache? = nil
    ) {
        self.session = session
        self.now = now
        self.alone = alone
        self.lockSeed = lockSeed
        self.permits = permits
        self.readerSetCache = readerSetCache
    }

    func lock(_ requests: [ObjectWriteRequest]) throws {
        let locks = Locks(requests, seed: lockSeed)
        try lock(locks)
        pending.locked.formUnion(locks.objects)
        try readAhead(requests)
    }

    /// Takes the locks; the first time, keeps the transaction's range of change numbers.
    private func lock(_ locks: Locks) throws {
        permits?.acquire(locks.datastores.count + locks.objects.count)
        let rows =
            alone
            ? try session.run(PostgresStatements.LockWritesAlone(locks: locks))
            : try session.run(PostgresStatements.LockWrites(locks: locks))
        if pending.feedBase == nil { pending.feedBase = try rows.first?.decode(Int64.self) }
    }

    /// The writes made, kept across the writer's copies, as one message per datastore and class:
    /// a message only says "pull again after this sequence" to the subscribers who may read one
    /// of the objects, so a push of 500 writes to one class is one message, not 500 (and one
    /// datastore read in each process that hears it).
    final class Changes {
        private var written: [Written] = []

        private struct Written {
            let datastoreKey: Int64
            let className: String
            var sequence: Int64
            var readers: Set<String>
        }

        /// Counts a write committed (with the transaction) at `sequence`, the transaction's
        /// latest in its datastore so far.
        func add(datastoreKey: Int64, className: String, sequence: Int64, readers: Set<String>) {
            if let index = written.firstIndex(where: { $0.datastoreKey == datastoreKey && $0.className == className }) {
                written[index].sequence = max(written[index].sequence, sequence)
                written[index].readers.formUnion(readers)
            } else {
                written.append(Written(datastoreKey: datastoreKey, className: className, sequence: sequence, readers: readers))
            }
        }

        /// The messages to send.
        func messages() -> [ClusterMessage] {
            written.map {
                .changed(
                    datastoreKey: $0.datastoreKey, sequence: $0.sequence, className: $0.className,
                    readers: $0.readers.sorted())
            }
        }
    }

    func write(
        _ request: ObjectWriteRequest, decide: (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) throws -> ObjectWriteOutcome {
        // The write's rows are kept in memory until they are flushed, after its flow has ended:
        // when it throws, dropping them takes it back (``Batch``).
        pending.dropStaged()
        let mark = batch.mark
        let outcome: ObjectWriteOutcome
        do {
            outcome = try ObjectWriteFlow.write(self, request, at: now, decide: decide)
        } catch {
            batch.rollBack(to: mark)
            pending.dropStaged()
            throw error
        }
        pending.commitStaged()
        if case .written(let stored, let readersBefore, _) = outcome {
            changes.add(
                datastoreKey: request.datastoreKey, className: request.className, sequence: stored.sequence,
                readers: readersBefore.union(stored.readers))
        }
        return outcome
    }

    func record(_ result: MutationResult, scope: String) throws -> MutationResult {
        try ObjectWriteFlow.record(self, result, scope: scope, at: now)
    }

    // MARK: ObjectWriteBackend

    /// The class's state (``RowFields``), read once per transaction after its lock is held
    /// (``PostgresStatements/LockWrites``): no batch of a rebuild changes it until commit.
    func rowFields(className: String, objectKey: Int64?) throws -> Set<String>? {
        if let known = batch.rowStates[className] { return known.kept(objectKey: objectKey) }
        let state = try PostgresStorage.rowFields(of: className, session)
        batch.rowStates[className] = state
        return state.kept(objectKey: objectKey)
    }

    func datastoreForWrite(_ request: ObjectWriteRequest) throws -> DatastoreRecord? {
        pending.limit(request.datastoreKey, by: request.datastoreLimits)
        let name = Locks.objectName(request)
        if !pending.locked.contains(name) {
            try lock(Locks([request], seed: lockSeed))
            pending.locked.insert(name)
        }
        // Read once the locks are held, once per transaction: its counters are checked again
        // at the end (``settle()``).
        if let read = batch.datastores[request.datastoreKey] { return pending.adding(to: read) }
        guard let read = try readDatastore(request.datastoreKey) else { return nil }
        batch.datastores[request.datastoreKey] = read
        return pending.adding(to: read)
    }

    /// The transaction's next number (``PostgresStatements/FeedBase``), checked to come after
    /// the object's last: the object's lock is held, so no transaction writes it before this one
    /// ends, but one numbered after this one may have written it before the lock was taken.
    /// - Throws: ``FeedContention`` then; what the database answers.
    func nextSequence(after datastore: DatastoreRecord, replacing current: StoredObject?) throws -> Int64 {
        let sequence = try pending.nextSequence()
        if let current, current.sequence >= sequence {
            throw FeedContention(message: "the object was written by a transaction numbered after this one")
        }
        return sequence
    }

    /// A recorded result joined with the object it left.
    static let resultSelect = """
        SELECT m.mutation_id, m.version, m.detail, m.object_key, o.body IS NOT NULL AND NOT o.deleted, \
        \(objectRowColumns) \
        FROM mutation_results m LEFT JOIN objects o ON o.key = m.object_key \
        LEFT JOIN datastores d ON d.key = o.datastore_key
        """

    /// The mutation ID and result of a ``resultSelect`` row.
    static func result(_ row: PostgresRow) throws -> (String, MutationResult) {
        let cells = Array(row)
        let id = try cells[0].decode(String.self)
        let version = try cells[1].decode(Int64?.self)
        let detail = try cells[2].decode(String?.self)
        let objectKey = try cells[3].decode(Int64?.self)
        let live = try cells[4].decode(Bool?.self) ?? false
        var object: ObjectSnapshot?
        if objectKey != nil, live {
            object = try PostgresStorage.objectRow(row, from: 5).snapshot()
        }
        let mutationId = try MutationID(id)
        return (id, try MutationResultRow.result(id: mutationId, version: version, detail: detail, object: object))
    }

    func recordedResult(scope: String, id: MutationID) throws -> MutationResult? {
        let key = Batch.ResultKey(scope: scope, mutationId: id.rawValue)
        if !batch.writtenResults.contains(key), let read = batch.results[key] {
            // Its object as read, unless this transaction wrote it since.
            guard let read else { return nil }
            if read.objectKey.map({ !batch.writtenKeys.contains($0) }) ?? true { return read.result }
        }
        try flush()
        return try session.run(PostgresStatements.RecordedResult(scope: scope, mutationId: id.rawValue)).first
            .map { try Self.result($0).1 }
    }

    func object(datastoreKey: Int64, className: String, objectId: String) throws -> (key: Int64, object: StoredObject)? {
        let name = Locks.objectName(datastoreKey: datastoreKey, className: className, objectId: objectId)
        if !batch.writtenNames.contains(name), let read = batch.objects[name] { return read }
        try flush()
        return try session.run(
            PostgresStatements.ObjectByName(datastoreKey: datastoreKey, className: className, objectId: objectId)
        ).first.map { try PostgresStorage.storedObject($0) }
    }

    func operations(objectKey: Int64, after version: Int64) throws -> [OperationRecord] {
        // Read ahead (``readAhead(_:)``) from this version or an older one, unless this
        // transaction wrote the object since.
        if !batch.writtenKeys.contains(objectKey), let read = batch.operations[objectKey], read.after <= version {
            return read.records.filter { $0.version > version }
        }
        if batch.unflushedKeys.contains(objectKey) { try flush() }
        return try session.run(PostgresStatements.OperationsAfter(objectKey: objectKey, version: version)).map {
            try StoredOperation.record(from: try $0.decode(String.self))
        }
    }

    func forEachOperationNewestFirst(objectKey: Int64, _ body: (OperationRecord) throws -> Bool) throws {
        if batch.unflushedKeys.contains(objectKey) { try flush() }
        for row in try session.query(
            "SELECT operation FROM object_operations WHERE object_key = \(objectKey) ORDER BY version DESC")
        {
            guard try body(try StoredOperation.record(from: try row.decode(String.self))) else {
                return
            }
        }
    }

    /// Kept with the batch's rows (``flush()``).
    func insertResult(_ row: MutationResultRow) throws {
        batch.resultRows.append(row)
        batch.writtenResults.insert(Batch.ResultKey(scope: row.scope, mutationId: row.mutationId))
    }

    /// Keeps the plan with the batch's rows (``flush()``); answers the object's key, or a new
    /// object's placeholder until it is inserted.
    func store(_ plan: ObjectStorePlan) throws -> Int64 {
        let readers = try plan.readerSet.map { readers throws in try readerSetID(readers) }
        let key = plan.existingKey ?? batch.placeholder()
        batch.stores.append(Batch.Store(plan: plan, readers: readers, placeholder: plan.existingKey == nil ? key : nil))
        batch.writtenNames.insert(Locks.objectName(plan))
        if plan.existingKey != nil {
            batch.writtenKeys.insert(key)
            batch.unflushedKeys.insert(key)
        }
        pending.stage(plan)
        return key
    }

    /// The ID of the reader set of `readers` (``SQLIndexRows/readerSet(of:)``), made with its
    /// members when it is new; sets known in the transaction (``Pending/readerSets``) or found
    /// committed before by the process (``PostgresReaderSetCache``) are not asked for again.
    /// Sets no object names are deleted by the history sweep (``PostgresStorage/sweepReaderSets(now:)``).
    /// - Throws: `internal` when the set is neither found nor made; what the database throws.
    private func readerSetID(_ readers: Set<String>) throws -> Int64 {
        let text = SQLIndexRows.readerSetText(readers)
        if let known = pending.readerSets[text] ?? pending.markedReaderSets[text] ?? readerSetCache?.id(of: text) {
            return known
        }
        let rows = try session.run(PostgresStatements.ReaderSet(text: text, principals: readers.sorted()))
        if let row = rows.first {
            // The process keeps the transaction's sets once it commits (``PostgresStorage/writeObjects(_:)``),
            // but not those a sweep marked unnamed: this transaction's lock keeps them until it ends.
            let (id, marked) = try row.decode((Int64, Bool).self)
            if marked { pending.markedReaderSets[text] = id } else { pending.readerSets[text] = id }
            return id
        }
        throw RooftopError(.internal, "a reader set was neither found nor made")
    }
}
