import NIOCore
import PostgresNIO
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

    /// The object of a ``storedObjectSelect`` row, with its readers.
    static func storedObject(_ row: PostgresRow) throws -> (key: Int64, object: StoredObject) {
        let object = try objectRow(row)
        let cells = Array(row)
        guard cells.count == 12 else { throw RooftopError(.internal, "an object row has \(cells.count) columns") }
        let current = try cells[10].decode([String].self)
        let former = try cells[11].decode([String].self)
        return (object.key, try object.stored(current: Set(current), former: Set(former)))
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
    public func writeObjects<T: Sendable>(_ body: @Sendable (any ObjectWriter) throws -> T) async throws -> T {
        let now = self.now()
        // The transaction ends before this returns, so `body` does not outlive the call; but the
        // thread pool may release its work item a moment after it resumes this task. The work
        // item holds a box, which gives `body` up before the escape check.
        return try await withoutActuallyEscaping(body) { body in
            let box = BodyBox(body)
            defer { box.body = nil }
            return try await transaction { [notifier] session in
                guard let body = box.body else { throw RooftopError(.internal, "a write ran after its call ended") }
                let writer = PostgresObjectWriter(session: session, now: now)
                let result = try body(writer)
                // Delivered to the other processes when (and only if) the transaction commits.
                try notifier.notify(writer.changes.messages, in: session)
                return result
            }
        }
    }

    /// Holds a transaction body for the thread that runs it (see ``writeObjects(_:)``).
    private final class BodyBox<T>: @unchecked Sendable {
        /// Set once, cleared when the call ends; read by the one thread running the transaction
        /// while the call awaits it.
        var body: (@Sendable (any ObjectWriter) throws -> T)?

        init(_ body: @escaping @Sendable (any ObjectWriter) throws -> T) { self.body = body }
    }
}

/// The ``ObjectWriter`` of one PostgreSQL transaction: each write in a savepoint, through the
/// shared ``ObjectWriteFlow``; the datastore's row is locked from its first write to commit.
struct PostgresObjectWriter: ObjectWriter, ObjectWriteBackend {
    let session: PostgresBlockingSession
    /// The time of the transaction, which its results are recorded at.
    let now: Timestamp
    /// The writes made, as messages to the other server processes.
    let changes = Changes()

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

        /// Counts a write committed (with the transaction) at `sequence`.
        func add(datastoreKey: Int64, className: String, sequence: Int64, readers: Set<String>) {
            if let index = written.firstIndex(where: { $0.datastoreKey == datastoreKey && $0.className == className }) {
                written[index].sequence = max(written[index].sequence, sequence)
                written[index].readers.formUnion(readers)
            } else {
                written.append(Written(datastoreKey: datastoreKey, className: className, sequence: sequence, readers: readers))
            }
        }

        /// The messages to send.
        var messages: [ClusterMessage] {
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
        let outcome = try session.inSavepoint { try ObjectWriteFlow.write(self, request, at: now, decide: decide) }
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

    func datastoreForWrite(key: Int64) throws -> DatastoreRecord? {
        try session.query("\(unescaped: PostgresStorage.datastoreSelect) WHERE d.key = \(key) FOR UPDATE OF d")
            .first.map(PostgresStorage.datastore)
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
        try session.query(
            "\(unescaped: Self.resultSelect) WHERE m.scope = \(scope) AND m.mutation_id = \(id.rawValue)"
        ).first.map { try Self.result($0).1 }
    }

    func object(datastoreKey: Int64, className: String, objectId: String) throws -> (key: Int64, object: StoredObject)? {
        try session.query(
            """
            \(unescaped: PostgresStorage.storedObjectSelect)
            WHERE o.datastore_key = \(datastoreKey) AND o.class_name = \(className) AND o.object_id = \(objectId)
            """
        ).first.map(PostgresStorage.storedObject)
    }

    func operations(objectKey: Int64, after version: Int64) throws -> [OperationRecord] {
        try session.query(
            "SELECT operation FROM object_operations WHERE object_key = \(objectKey) AND version > \(version) ORDER BY version"
        ).map { try DocumentCoding.decode(OperationRecord.self, from: try $0.decode(String.self)) }
    }

    func forEachOperationNewestFirst(objectKey: Int64, _ body: (OperationRecord) throws -> Bool) throws {
        for row in try session.query(
            "SELECT operation FROM object_operations WHERE object_key = \(objectKey) ORDER BY version DESC")
        {
            guard try body(try DocumentCoding.decode(OperationRecord.self, from: try row.decode(String.self))) else {
                return
            }
        }
    }

    func insertResult(_ row: MutationResultRow) throws {
        try session.execute(
            """
            INSERT INTO mutation_results (scope, mutation_id, version, object_key, detail, created_at)
            VALUES (\(row.scope), \(row.mutationId), \(row.version), \(row.objectKey), \(row.detail), \(row.createdAt))
            ON CONFLICT DO NOTHING
            """)
    }

    /// Writes the plan in two statements at most: the index rows of changed fields are deleted
    /// first (the new rows of the same fields would collide with them inside one statement), then
    /// one statement of data-modifying `WITH` clauses writes the object row and, from the key it
    /// returns, the index rows, elements, readers, operation and the datastore's counters. Each
    /// statement is a round trip, and round trips are what a write on PostgreSQL costs.
    func store(_ plan: ObjectStorePlan) throws -> Int64 {
        if let key = plan.existingKey, !plan.removedFields.isEmpty {
            let removed = plan.removedFields.map(\.field)
            let elements = plan.removedFields.filter(\.elements).map(\.field)
            try session.execute(
                """
                WITH e AS (DELETE FROM object_elements WHERE object_key = \(key) AND field = ANY(\(elements)))
                DELETE FROM object_fields WHERE object_key = \(key) AND field = ANY(\(removed))
                """)
        }
        var statement = StoreStatement()
        var clauses: [String] = []
        if let key = plan.existingKey {
            clauses.append(
                """
                o AS (UPDATE objects SET body = \(statement.bind(plan.body)), created_at = \(statement.bind(plan.createdAt)),
                updated_at = \(statement.bind(plan.updatedAt)), version = \(statement.bind(plan.version)),
                sequence = \(statement.bind(plan.sequence)), deleted = \(statement.bind(plan.deleted)),
                size_bytes = \(statement.bind(plan.size)) WHERE key = \(statement.bind(key)) RETURNING key)
                """)
        } else {
            clauses.append(
                """
                o AS (INSERT INTO objects (body, created_at, updated_at, version, sequence, deleted, size_bytes,
                datastore_key, class_name, object_id) VALUES (\(statement.bind(plan.body)), \(statement.bind(plan.createdAt)),
                \(statement.bind(plan.updatedAt)), \(statement.bind(plan.version)), \(statement.bind(plan.sequence)),
                \(statement.bind(plan.deleted)), \(statement.bind(plan.size)), \(statement.bind(plan.datastoreKey)),
                \(statement.bind(plan.className)), \(statement.bind(plan.objectId))) RETURNING key)
                """)
        }
        let fields = plan.addedFields
        if !fields.isEmpty {
            clauses.append(
                """
                f AS (INSERT INTO object_fields (object_key, field, kind, sort_key, latitude, longitude)
                SELECT o.key, u.* FROM o, unnest(\(statement.bind(fields.map(\.field)))::text[],
                \(statement.bind(fields.map(\.kind)))::bigint[], \(statement.bind(PostgresByteaArray(fields.map(\.sortKey))))::bytea[],
                \(statement.bind(PostgresDoubleArray(fields.map(\.latitude))))::float8[],
                \(statement.bind(PostgresDoubleArray(fields.map(\.longitude))))::float8[]) AS u)
                """)
        }
        let elements = fields.flatMap { row in row.elements.map { (row.field, $0) } }
        if !elements.isEmpty {
            clauses.append(
                """
                e AS (INSERT INTO object_elements (object_key, field, element_key)
                SELECT o.key, u.* FROM o, unnest(\(statement.bind(elements.map(\.0)))::text[],
                \(statement.bind(PostgresByteaArray(elements.map(\.1))))::bytea[]) AS u ON CONFLICT DO NOTHING)
                """)
        }
        if !plan.unindexed.isEmpty {
            clauses.append(
                """
                x AS (INSERT INTO unindexed_fields (datastore_key, class_name, field, objects)
                SELECT \(statement.bind(plan.datastoreKey)), \(statement.bind(plan.className)), u.* FROM
                unnest(\(statement.bind(plan.unindexed.map(\.field)))::text[], \(statement.bind(plan.unindexed.map(\.delta)))::bigint[]) AS u
                ON CONFLICT (datastore_key, class_name, field) DO UPDATE SET objects = unindexed_fields.objects + excluded.objects)
                """)
        }
        if !plan.endedReaders.isEmpty {
            clauses.append(
                """
                re AS (UPDATE object_readers r SET to_sequence = \(statement.bind(plan.sequence)) FROM o
                WHERE r.object_key = o.key AND r.principal = ANY(\(statement.bind(plan.endedReaders))) AND r.to_sequence IS NULL)
                """)
        }
        if !plan.startedReaders.isEmpty {
            clauses.append(
                """
                rs AS (INSERT INTO object_readers (object_key, principal, from_sequence)
                SELECT o.key, unnest(\(statement.bind(plan.startedReaders))::text[]), \(statement.bind(plan.sequence)) FROM o)
                """)
        }
        clauses.append(
            """
            p AS (INSERT INTO object_operations (object_key, version, operation, sequence)
            SELECT o.key, \(statement.bind(plan.operationVersion)), \(statement.bind(plan.operation)), \(statement.bind(plan.sequence)) FROM o
            ON CONFLICT (object_key, version) DO UPDATE SET operation = excluded.operation, sequence = excluded.sequence)
            """)
        clauses.append(
            """
            d AS (UPDATE datastores SET sequence = \(statement.bind(plan.sequence)),
            record_count = record_count + \(statement.bind(plan.countDelta)),
            size_bytes = size_bytes + \(statement.bind(plan.sizeDelta)) WHERE key = \(statement.bind(plan.datastoreKey)))
            """)
        guard
            let row = try session.query(
                PostgresQuery(
                    unsafeSQL: "WITH " + clauses.joined(separator: ",\n") + "\nSELECT key FROM o",
                    binds: statement.bindings)
            ).first
        else { throw RooftopError(.internal, "an object write returned no key") }
        return try row.decode(Int64.self)
    }
}

/// The bound arguments of one statement built clause by clause, each placed as `$n`.
private struct StoreStatement {
    var bindings = PostgresBindings(capacity: 32)

    /// Binds `value`; returns its placeholder.
    mutating func bind(_ value: some PostgresNonThrowingEncodable) -> String {
        bindings.append(value)
        return "$\(bindings.count)"
    }

    /// Binds `value` or `NULL`; returns its placeholder.
    mutating func bind(_ value: (some PostgresNonThrowingEncodable)?) -> String {
        bindings.append(value)
        return "$\(bindings.count)"
    }
}
