import GRDB
import RooftopShared

extension SQLiteStorage {
    /// See ``Storage/mutationResult(scope:id:)``.
    public func mutationResult(scope: String, id: MutationID) async throws -> MutationResult? {
        try await pool.read { db in
            try String.fetchOne(
                db, sql: "SELECT result FROM mutations WHERE scope = ? AND mutation_id = ?",
                arguments: [scope, id.rawValue]
            ).map { try StorageCoding.decode(MutationResult.self, from: $0) }
        }
    }

    /// See ``Storage/recordMutationResult(_:scope:)``.
    public func recordMutationResult(_ result: MutationResult, scope: String) async throws -> MutationResult {
        try await pool.write { db in
            // A concurrent push of the same ID may have recorded a result first: that one stands.
            try db.execute(
                sql: "INSERT OR IGNORE INTO mutations (scope, mutation_id, result, created_at) VALUES (?, ?, ?, ?)",
                arguments: [
                    scope, result.mutationId.rawValue, try StorageCoding.encode(result),
                    Timestamp.now.millisecondsSinceEpoch,
                ])
            guard
                let text = try String.fetchOne(
                    db, sql: "SELECT result FROM mutations WHERE scope = ? AND mutation_id = ?",
                    arguments: [scope, result.mutationId.rawValue])
            else { return result }
            return try StorageCoding.decode(MutationResult.self, from: text)
        }
    }
}
