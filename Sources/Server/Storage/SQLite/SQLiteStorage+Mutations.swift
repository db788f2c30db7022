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
                let chunk = texts[start..<min(start + 500, texts.count)]
                let placeholders = repeatElement("?", count: chunk.count).joined(separator: ",")
                let rows = try Row.fetchCursor(
                    db,
                    sql: "SELECT mutation_id, result FROM mutations WHERE scope = ? AND mutation_id IN (\(placeholders))",
                    arguments: StatementArguments([scope] + Array(chunk)))
                while let row = try rows.next() {
                    guard let id = byText[row["mutation_id"]] else { continue }
                    found[id] = try DocumentCoding.decode(MutationResult.self, from: row["result"] as String)
                }
            }
            return found
        }
    }

    /// See ``Storage/writeObjects(_:)``.
    public func writeObjects<T: Sendable>(_ body: @Sendable (any ObjectWriter) throws -> T) async throws -> T {
        try await pool.write { db in try body(SQLiteObjectWriter(db: db)) }
    }
}

/// The ``ObjectWriter`` of one SQLite write transaction: each write in a savepoint.
struct SQLiteObjectWriter: ObjectWriter {
    let db: Database

    func write(
        _ request: ObjectWriteRequest, decide: (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) throws -> ObjectWriteOutcome {
        var outcome: ObjectWriteOutcome?
        try db.inSavepoint {
            outcome = try SQLiteStorage.writeObject(db, request, decide: decide)
            return .commit
        }
        guard let outcome else { throw RooftopError(.internal, "a write ended without an outcome") }
        return outcome
    }

    func record(_ result: MutationResult, scope: String) throws -> MutationResult {
        // A concurrent push of the same ID may have recorded a result first: that one stands.
        try db.execute(
            sql: "INSERT OR IGNORE INTO mutations (scope, mutation_id, result, created_at) VALUES (?, ?, ?, ?)",
            arguments: [
                scope, result.mutationId.rawValue, try DocumentCoding.encode(result),
                Timestamp.now.millisecondsSinceEpoch,
            ])
        guard
            let text = try String.fetchOne(
                db, sql: "SELECT result FROM mutations WHERE scope = ? AND mutation_id = ?",
                arguments: [scope, result.mutationId.rawValue])
        else { return result }
        return try DocumentCoding.decode(MutationResult.self, from: text)
    }
}
