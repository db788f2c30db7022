import Foundation
import Logging
import RooftopTestSupport

@testable import RooftopServer

/// The PostgreSQL test cluster (``TestPostgres``) as the server tests use it: databases of their
/// own, and pools (as many servers) on them.
enum PostgresTestCluster {
    /// Whether the PostgreSQL tests run (see ``TestPostgres/enabled``).
    static var enabled: Bool { TestPostgres.enabled }

    /// Creates a new, empty database; returns its URL.
    static func createDatabase() async throws -> String { try await TestPostgres.createDatabase() }

    /// Drops a database ``createDatabase()`` made.
    static func dropDatabase(url: String) async throws { try await TestPostgres.dropDatabase(url: url) }

    /// Runs `body` with `count` pools (as many servers) on a new database of its own; closes them
    /// and drops the database afterwards, whether `body` succeeded or not.
    static func withPools<T>(
        _ count: Int = 1, connections: Int = 2, logger: Logger, _ body: ([PostgresPool]) async throws -> T
    ) async throws -> T {
        try await TestPostgres.withDatabase { url in
            var pools: [PostgresPool] = []
            let result: Result<T, any Error>
            do {
                for _ in 0..<count { pools.append(try PostgresPool(url: url, maximumConnections: connections, logger: logger)) }
                result = .success(try await body(pools))
            } catch {
                result = .failure(error)
            }
            for pool in pools { await pool.close() }
            return try result.get()
        }
    }
}
