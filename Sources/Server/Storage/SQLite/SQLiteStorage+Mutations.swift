import GRDB
import RooftopShared

extension SQLiteStorage {
    /// See ``Storage/mutationResults(scope:ids:)``.
    public func mutationResults(scope: String, ids: [MutationID]) async throws -> [MutationID: MutationResult] {
        guard !ids.isEmpty else { return [:] }
        return try await pool.read { db in
            var found: [MutationID: MutationResult] = [:]
            let byText = Dictionary(ids.map { ($0.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
            let texts = Array(byText.keys)
            for start in stride(from: 0, to: texts.count, by: 500) {
                let chunk = Array(texts[start..<min(start + 500, texts.count)])
                let placeholders = repeatElement("?", count: chunk.count).joined(separator: ",")
                let rows = try Row.fetchCursor(
                    db, sql: "\(Self.recordedResultSelect) WHERE m.scope = ? AND m.mutation_id IN (\(placeholders))",
                    arguments: StatementArguments([scope] + chunk))
                while let row = try rows.next() {
                    guard let id = byText[row["mutation_id"]] else { continue }
                    found[id] = try Self.recordedResult(from: row, id: id)
                }
                // Results recorded before the compact form (schema v4) keep their old rows.
                let legacy = try Row.fetchCursor(
                    db,
                    sql: "SELECT mutation_id, result FROM mutations WHERE scope = ? AND mutation_id IN (\(placeholders))",
                    arguments: StatementArguments([scope] + chunk))
                while let row = try legacy.next() {
                    guard let id = byText[row["mutation_id"]], found[id] == nil else { continue }
                    found[id] = try DocumentCoding.decode(MutationResult.self, from: row["result"] as String)
                }
            }
            return found
        }
    }

    /// See ``Storage/writeObjects(_:)``.
    public func writeObjects<T: Sendable>(_ body: @Sendable (any ObjectWriter) throws -> T) async throws -> T {
        let (result, writes) = try await pool.write { db in
            let writer = SQLiteObjectWriter(db: db, now: self.now())
            let result = try body(writer)
            return (result, writer.tally.count)
        }
        noteWrites(writes)
        return result
    }

    /// A recorded result joined with the object it left, as ``recordedResult(from:id:)`` reads it.
    private static let recordedResultSelect = """
        SELECT m.mutation_id, m.version AS result_version, m.object_key AS result_object_key, m.detail, o.*,
        d.id AS datastore_id
        FROM mutation_results m LEFT JOIN objects o ON o.key = m.object_key
        LEFT JOIN datastores d ON d.key = o.datastore_key
        """

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

    /// A result from its compact row (see ``recordMutation(_:scope:id:result:objectKey:at:)``). An
    /// applied result that left an object answers with the object's current state when it is
    /// live: the state the mutation produced, or a later one (its `version` stays the mutation's,
    /// so the client rebases what it queued since on the right version). A result that left no
    /// object, or whose object has been deleted since, answers without one.
    private static func recordedResult(from row: Row, id: MutationID) throws -> MutationResult {
        let detail: String? = row["detail"]
        guard let version: Int64 = row["result_version"] else {
            guard let detail else { throw RooftopError(.internal, "a refused mutation's record has no error") }
            return .rejected(mutationId: id, error: try DocumentCoding.decode(RooftopError.self, from: detail))
        }
        let merges = try detail.map { try DocumentCoding.decode([MergeDecision].self, from: $0) } ?? []
        var object: ObjectSnapshot?
        if (row["result_object_key"] as Int64?) != nil, (row["key"] as Int64?) != nil, (row["deleted"] as Int64?) == 0 {
            object = try snapshot(from: row)
        }
        return .applied(mutationId: id, version: version, object: object, merges: merges)
    }

    /// Records a mutation's first result in its compact form: the version, the key of the object
    /// it left (`objectKey`, `nil` when the result has no object) and its merges or error. Does
    /// nothing when a result is recorded already.
    static func recordMutation(
        _ db: Database, scope: String, id: MutationID, result: MutationResult, objectKey: Int64?, at time: Timestamp
    ) throws {
        var version: Int64?
        var detail: String?
        switch result {
        case .applied(_, let applied, _, let merges):
            version = applied
            if !merges.isEmpty { detail = try DocumentCoding.encode(merges) }
        case .rejected(_, let error):
            detail = try DocumentCoding.encode(error)
        }
        try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO mutation_results (scope, mutation_id, version, object_key, detail, created_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            scope, id.rawValue, version, result.appliedObject == nil ? nil : objectKey, detail,
            time.millisecondsSinceEpoch,
        ])
    }
}

extension MutationResult {
    /// The object of an applied result, if any.
    fileprivate var appliedObject: ObjectSnapshot? {
        if case .applied(_, _, let object, _) = self { object } else { nil }
    }
}

/// The ``ObjectWriter`` of one SQLite write transaction: each write in a savepoint.
struct SQLiteObjectWriter: ObjectWriter {
    let db: Database
    /// The time of the transaction, which its results are recorded at.
    let now: Timestamp
    /// How many writes were made.
    let tally = Tally()

    /// A count kept across the writer's copies.
    final class Tally {
        var count = 0
    }

    func write(
        _ request: ObjectWriteRequest, decide: (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) throws -> ObjectWriteOutcome {
        tally.count += 1
        var outcome: ObjectWriteOutcome?
        try db.inSavepoint {
            outcome = try SQLiteStorage.writeObject(db, request, at: now, decide: decide)
            return .commit
        }
        guard let outcome else { throw RooftopError(.internal, "a write ended without an outcome") }
        return outcome
    }

    func record(_ result: MutationResult, scope: String) throws -> MutationResult {
        // A concurrent push of the same ID may have recorded a result first: that one stands.
        if let recorded = try SQLiteStorage.recordedResult(db, scope: scope, id: result.mutationId) { return recorded }
        try SQLiteStorage.recordMutation(
            db, scope: scope, id: result.mutationId, result: result, objectKey: nil, at: now)
        return result
    }
}
