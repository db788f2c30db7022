import NIOCore
import PostgresNIO
import RooftopSQL
import RooftopShared

extension PostgresStorage {
    /// An object row with its current and former readers, in one statement (one snapshot).
    static let storedObjectSelect = """
        SELECT \(objectRowColumns), \
        ARRAY(SELECT r.principal FROM object_readers r WHERE r.object_key = o.key AND r.to_sequence IS NULL), \
        ARRAY(SELECT DISTINCT r.principal FROM object_readers r WHERE r.object_key = o.key) \
        FROM objects o JOIN datastores d ON d.key = o.datastore_key
        """

    /// The ``ObjectRow`` of a row whose columns from `first` on are ``objectRowColumns``.
    static func objectRow(_ row: PostgresRow, from first: Int = 0) throws -> ObjectRow {
        let cells = Array(row)
        guard cells.count >= first + 10 else { throw RooftopError(.internal, "an object row is missing columns") }
        return ObjectRow(
            key: try cells[first].decode(Int64.self), className: try cells[first + 1].decode(String.self),
            objectId: try cells[first + 2].decode(String.self), datastoreId: try cells[first + 3].decode(String.self),
            body: try cells[first + 4].decode(String.self), createdAt: try cells[first + 5].decode(Int64?.self),
            updatedAt: try cells[first + 6].decode(Int64?.self), version: try cells[first + 7].decode(Int64.self),
            sequence: try cells[first + 8].decode(Int64.self), deleted: try cells[first + 9].decode(Bool.self))
    }

    /// The object of a ``storedObjectSelect`` row (whose columns start at `first`), with its readers.
    static func storedObject(_ row: PostgresRow, from first: Int = 0) throws -> (key: Int64, object: StoredObject) {
        let (object, current, former) = try objectRowWithReaders(row, from: first)
        return (object.key, try object.stored(current: current, former: former))
    }

    /// The object of a ``storedObjectSelect`` row as the change feed reads it, its body not decoded.
    static func feedObject(_ row: PostgresRow) throws -> FeedObject {
        let (object, current, former) = try objectRowWithReaders(row)
        return object.feedObject(current: current, former: former)
    }

    /// The ``ObjectRow`` of a ``storedObjectSelect`` row, with its current and former readers.
    private static func objectRowWithReaders(_ row: PostgresRow, from first: Int = 0) throws
        -> (row: ObjectRow, current: Set<String>, former: Set<String>)
    {
        let object = try objectRow(row, from: first)
        let cells = Array(row)
        guard cells.count == first + 12 else { throw RooftopError(.internal, "an object row has \(cells.count) columns") }
        let current = try cells[first + 10].decode([String].self)
        let former = try cells[first + 11].decode([String].self)
        return (object, Set(current), Set(former))
    }

    /// See ``Storage/object(datastoreKey:className:objectId:)``.
    public func object(datastoreKey: Int64, className: String, objectId: String) async throws -> StoredObject? {
        try await read { session in
            try PostgresObjectWriter(session: session, now: .now).object(datastoreKey: datastoreKey, className: className, objectId: objectId)?.object
        }
    }

    /// See ``Storage/objects(datastoreKey:pointers:)``.
    public func objects(datastoreKey: Int64, pointers: [Pointer]) async throws -> [StoredObject] {
        guard !pointers.isEmpty else { return [] }
        let classes = pointers.map(\.className)
        let ids = pointers.map(\.objectId)
        return try await read { session in
            // One statement for all, in the pointers' order.
            try session.query(
                """
                \(unescaped: Self.storedObjectSelect)
                JOIN unnest(\(classes)::text[], \(ids)::text[]) WITH ORDINALITY AS p(class_name, object_id, position)
                ON o.class_name = p.class_name AND o.object_id = p.object_id
                WHERE o.datastore_key = \(datastoreKey) AND NOT o.deleted ORDER BY p.position
                """
            ).map { try Self.storedObject($0).object }
        }
    }

    /// See ``Storage/operations(datastoreKey:className:objectId:after:)``.
    public func operations(datastoreKey: Int64, className: String, objectId: String, after version: Int64) async throws
        -> [OperationRecord]
    {
        try await read { session in
            try session.query(
                """
                SELECT p.operation FROM object_operations p JOIN objects o ON o.key = p.object_key
                WHERE o.datastore_key = \(datastoreKey) AND o.class_name = \(className) AND o.object_id = \(objectId)
                AND p.version > \(version) ORDER BY p.version
                """
            ).map { try DocumentCoding.decode(OperationRecord.self, from: try $0.decode(String.self)) }
        }
    }

    /// See ``Storage/mutationResults(scope:ids:)``.
    public func mutationResults(scope: String, ids: [MutationID]) async throws -> [MutationID: MutationResult] {
        guard !ids.isEmpty else { return [:] }
        let byText = Dictionary(ids.map { ($0.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
        let texts = Array(byText.keys)
        return try await read { session in
            var found: [MutationID: MutationResult] = [:]
            for row in try session.query(
                "\(unescaped: PostgresObjectWriter.resultSelect) WHERE m.scope = \(scope) AND m.mutation_id = ANY(\(texts))")
            {
                let (id, result) = try PostgresObjectWriter.result(row)
                if let id = byText[id] { found[id] = result }
            }
            return found
        }
    }

    /// See ``Storage/writeObjects(_:)``.
    ///
    /// The datastores' writers run at once: each write locks only its object, and the
    /// transaction's changes are numbered at its end, under each datastore's row lock held until
    /// commit (``PostgresObjectWriter/settle()``). When a concurrent transaction took the room
    /// under a datastore's limits that this one's decisions counted on, the transaction is rolled
    /// back and `body` runs again, alone in its datastores.
    public func writeObjects<T: Sendable>(_ body: @Sendable (any ObjectWriter) throws -> T) async throws -> T {
        do {
            return try await writeObjects(alone: false, body)
        } catch is PostgresObjectWriter.LimitContention {
            return try await writeObjects(alone: true, body)
        }
    }

    /// One attempt of ``writeObjects(_:)``: `alone`, the transaction excludes every other writer
    /// of its datastores from its first write to them until it commits.
    private func writeObjects<T: Sendable>(alone: Bool, _ body: @Sendable (any ObjectWriter) throws -> T) async throws
        -> T
    {
        let now = self.now()
        let seed = try await lockSeed()
        // Given back once the transaction has ended, with its locks.
        let permits = lockBudget.permits()
        defer { permits.release() }
        // The transaction ends before this returns, so `body` does not outlive the call; but the
        // thread pool may release its work item a moment after it resumes this task. The work
        // item holds a box, which gives `body` up before the escape check.
        return try await withoutActuallyEscaping(body) { body in
            let box = BodyBox(body)
            defer { box.body = nil }
            let result = try await transaction { [notifier, readerSetCache] session in
                guard let body = box.body else { throw RooftopError(.internal, "a write ran after its call ended") }
                let writer = PostgresObjectWriter(
                    session: session, now: now, alone: alone, lockSeed: seed, permits: permits,
                    readerSetCache: readerSetCache)
                let result = try body(writer)
                try writer.settle()
                // Delivered to the other processes when (and only if) the transaction commits.
                try notifier.notify(writer.changes.messages(writer.numbering), in: session)
                box.readerSets = writer.pending.readerSets
                box.writes = writer.batch.mark.stores
                return result
            }
            // Committed: the sets it found or made stay.
            for (text, id) in box.readerSets { readerSetCache.keep(text, id) }
            statistics.committed(box.writes) { [self] in try await analyzeObjectTables() }
            return result
        }
    }

    /// Holds a transaction body for the thread that runs it (see ``writeObjects(_:)``).
    private final class BodyBox<T>: @unchecked Sendable {
        /// Set once, cleared when the call ends; read by the one thread running the transaction
        /// while the call awaits it.
        var body: (@Sendable (any ObjectWriter) throws -> T)?
        /// The reader sets the transaction used, by text, once it has ended.
        var readerSets: [String: Int64] = [:]
        /// How many objects it wrote.
        var writes = 0

        init(_ body: @escaping @Sendable (any ObjectWriter) throws -> T) { self.body = body }
    }
}

/// The ``ObjectWriter`` of one PostgreSQL transaction: each write through the shared
/// ``ObjectWriteFlow``, its object locked until commit, reading what was read ahead for the push
/// and keeping its rows in memory until the batch is written (``Batch``); the changes are
/// numbered and the datastores' counters written at the transaction's end (``settle()``).
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
    let numbering: FeedNumbering? = FeedNumbering()
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

    private func lock(_ locks: Locks) throws {
        permits?.acquire(locks.datastores.count + locks.objects.count)
        _ =
            alone
            ? try session.run(PostgresStatements.LockWritesAlone(locks: locks))
            : try session.run(PostgresStatements.LockWrites(locks: locks))
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
                // The transaction's latest change: provisional sequences go down (-1, -2, …).
                written[index].sequence = sequence
                written[index].readers.formUnion(readers)
            } else {
                written.append(Written(datastoreKey: datastoreKey, className: className, sequence: sequence, readers: readers))
            }
        }

        /// The messages to send, with the sequences the transaction settled.
        func messages(_ numbering: FeedNumbering?) -> [ClusterMessage] {
            written.map {
                .changed(
                    datastoreKey: $0.datastoreKey,
                    sequence: numbering?.committed($0.sequence, datastoreKey: $0.datastoreKey) ?? $0.sequence,
                    className: $0.className, readers: $0.readers.sorted())
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

    /// PostgreSQL keeps every field's rows: its queries have no function reading a stored body
    /// (``SQLIndexLayout/server``).
    func rowFields(className: String, objectKey: Int64?) throws -> Set<String>? { nil }

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

    func nextSequence(after datastore: DatastoreRecord) -> Int64 {
        pending.provisionalSequence(datastoreKey: datastore.key)
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
        if batch.unflushedKeys.contains(objectKey) { try flush() }
        return try session.run(PostgresStatements.OperationsAfter(objectKey: objectKey, version: version)).map {
            try DocumentCoding.decode(OperationRecord.self, from: try $0.decode(String.self))
        }
    }

    func forEachOperationNewestFirst(objectKey: Int64, _ body: (OperationRecord) throws -> Bool) throws {
        if batch.unflushedKeys.contains(objectKey) { try flush() }
        for row in try session.query(
            "SELECT operation FROM object_operations WHERE object_key = \(objectKey) ORDER BY version DESC")
        {
            guard try body(try DocumentCoding.decode(OperationRecord.self, from: try row.decode(String.self))) else {
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
