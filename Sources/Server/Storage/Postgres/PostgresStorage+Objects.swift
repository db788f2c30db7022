import NIOCore
import PostgresNIO
import RooftopSQL
import RooftopShared

extension PostgresStorage {
    /// An object row with its current and former readers, in one statement (one snapshot). A
    /// live object's current readers are its reader set's principals and the history's rows
    /// without an end (readers its set does not name); a tombstone's are those rows alone; its
    /// former readers add the rows whose access ended (``ReaderHistoryWrite``).
    static let storedObjectSelect = """
        SELECT \(objectRowColumns), \
        ARRAY(SELECT r.principal FROM object_readers r WHERE r.object_key = o.key AND r.to_sequence IS NULL \
            UNION \(setPrincipals)), \
        ARRAY(SELECT r.principal FROM object_readers r WHERE r.object_key = o.key UNION \(setPrincipals)) \
        FROM objects o JOIN datastores d ON d.key = o.datastore_key
        """

    /// ``storedObjectSelect`` for many objects at once (a push's read ahead): the reader set's ID
    /// and stored text in place of its principals unnested and merged in SQL for every row (twice
    /// a row, a JSON parse each: most of a 500-object read, whose objects share a few sets). Read
    /// by ``storedObject(_:from:sets:)``, which gives the same readers.
    static let setObjectSelect = """
        SELECT \(objectRowColumns), o.readers, s.principals, \
        ARRAY(SELECT r.principal FROM object_readers r WHERE r.object_key = o.key AND r.to_sequence IS NULL), \
        ARRAY(SELECT r.principal FROM object_readers r WHERE r.object_key = o.key) \
        FROM objects o JOIN datastores d ON d.key = o.datastore_key \
        LEFT JOIN reader_sets s ON s.id = o.readers AND NOT o.deleted
        """

    /// The object of a ``setObjectSelect`` row (whose columns start at `first`), with its readers:
    /// a live object's current readers are its set's principals and its history's rows without an
    /// end, its former ones every history row's and the set's; a tombstone's are its history's
    /// alone (as ``storedObjectSelect`` reads them; a set named but not stored gives none there
    /// too). `sets` keeps the sets decoded, by ID (``FeedReaders``, as the feed's pages do).
    /// - Throws: `internal` for a row of another shape or a set that is not a list of principals;
    ///   what decoding a cell throws.
    static func storedObject(_ row: PostgresRow, from first: Int, sets: inout FeedReaders) throws
        -> (key: Int64, object: StoredObject)
    {
        let object = try objectRow(row, from: first)
        let cells = Array(row)
        guard cells.count == first + 14 else { throw RooftopError(.internal, "an object row has \(cells.count) columns") }
        var current = Set(try cells[first + 12].decode([String].self))
        var former = Set(try cells[first + 13].decode([String].self))
        if !object.deleted, let id = try cells[first + 10].decode(Int64?.self) {
            // A set named but not stored gives no readers, as ``storedObjectSelect`` reads it.
            let principals = try sets.principals(ofSet: id) { try cells[first + 11].decode(String?.self) } ?? []
            current.formUnion(principals)
            former.formUnion(principals)
        }
        return (object.key, try object.stored(current: current, former: former))
    }

    /// The principals of a live object's (`o`) reader set, as a `SELECT` of one text column.
    private static let setPrincipals =
        "SELECT jsonb_array_elements_text(s.principals::jsonb) FROM reader_sets s WHERE s.id = o.readers AND NOT o.deleted"

    /// An object row as the change feed reads it, in one statement (one snapshot):
    /// ``objectRowColumns``, then its reader set and the set's principals, a tombstone's readers,
    /// and the principals the readers' history adds (``FeedReaders``).
    static let feedObjectSelect = """
        SELECT \(objectRowColumns), o.readers, s.principals, \
        CASE WHEN o.deleted THEN ARRAY(SELECT r.principal FROM object_readers r
            WHERE r.object_key = o.key AND r.to_sequence IS NULL) END, \
        ARRAY(SELECT DISTINCT r.principal FROM object_readers r
            WHERE r.object_key = o.key AND (o.deleted OR r.to_sequence IS NOT NULL)) \
        FROM objects o JOIN datastores d ON d.key = o.datastore_key LEFT JOIN reader_sets s ON s.id = o.readers
        """

    /// The feed objects of ``feedObjectSelect`` rows, their bodies not decoded.
    /// - Throws: What decoding a row throws; `internal` for a reader set that cannot be read.
    static func feedObjects(_ rows: [PostgresRow]) throws -> [FeedObject] {
        var readers = FeedReaders()
        return try rows.map { row in
            let object = try objectRow(row)
            let cells = Array(row)
            guard cells.count == 14 else { throw RooftopError(.internal, "a feed row has \(cells.count) columns") }
            let found = try readers.readers(
                readerSet: try cells[10].decode(Int64?.self), setPrincipals: { try cells[11].decode(String?.self) },
                lastReaders: try cells[12].decode([String]?.self), historyReaders: try cells[13].decode([String].self))
            return object.feedObject(current: found.current, former: found.former)
        }
    }

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

    /// See ``ObjectStorage/object(datastoreKey:className:objectId:)``.
    public func object(datastoreKey: Int64, className: String, objectId: String) async throws -> StoredObject? {
        try await read { session in
            try PostgresObjectWriter(session: session, now: .now).object(datastoreKey: datastoreKey, className: className, objectId: objectId)?.object
        }
    }

    /// See ``ObjectStorage/objects(datastoreKey:pointers:)``.
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

    /// See ``ObjectStorage/operations(datastoreKey:className:objectId:after:)``.
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
            ).map { try StoredOperation.record(from: try $0.decode(String.self)) }
        }
    }

    /// See ``ObjectStorage/mutationResults(scope:ids:)``.
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

    /// See ``ObjectStorage/writeObjects(_:)``.
    ///
    /// The datastores' writers run at once: each write locks only its object, the transaction's
    /// changes are numbered in its own range (``PostgresStatements/FeedBase``), and its counters
    /// added at its end, under each datastore's row lock held until commit
    /// (``PostgresObjectWriter/settle()``). When a concurrent transaction took the room under a
    /// datastore's limits that this one's decisions counted on, the transaction is rolled back
    /// and `body` runs again, alone in its datastores; when one numbered after it wrote an
    /// object first (``PostgresObjectWriter/FeedContention``), `body` runs again as it was.
    public func writeObjects<T: Sendable>(_ body: @Sendable (any ObjectWriter) throws -> T) async throws -> T {
        var (alone, contended) = (false, 0)
        while true {
            do {
                return try await writeObjects(alone: alone, body)
            } catch is PostgresObjectWriter.LimitContention where !alone {
                alone = true
            } catch let error as PostgresObjectWriter.FeedContention {
                // Runs again, numbered after what committed meanwhile.
                contended += 1
                if contended >= Self.feedContentionAttempts { throw error }
            }
        }
    }

    /// How many times a write transaction runs when it keeps meeting ``PostgresObjectWriter/FeedContention``.
    static let feedContentionAttempts = 4

    /// One attempt of ``writeObjects(_:)``: `alone`, the transaction excludes every other writer
    /// of its datastores from its first write to them until it commits.
    private func writeObjects<T: Sendable>(alone: Bool, _ body: @Sendable (any ObjectWriter) throws -> T) async throws
        -> T
    {
        let now = self.clock.now()
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
                // First, before anything gives the transaction an ID: it may number changes, so
                // pulls wait for it (``PostgresStatements/feedBound``).
                try session.execute(PostgresStatements.markWriter)
                let writer = PostgresObjectWriter(
                    session: session, now: now, alone: alone, lockSeed: seed, permits: permits,
                    readerSetCache: readerSetCache)
                let result = try body(writer)
                try writer.settle()
                // Delivered to the other processes when (and only if) the transaction commits.
                try notifier.notify(writer.changes.messages(), in: session)
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
