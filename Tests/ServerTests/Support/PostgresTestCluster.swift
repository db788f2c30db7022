import Foundation
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import RooftopServer

/// The PostgreSQL cluster the PostgreSQL tests use: the one `Tests/postgres/with-cluster.sh`
/// starts (its URL in `ROOFTOP_TEST_POSTGRES_URL`). Without one those tests are skipped, and say
/// so loudly; with `ROOFTOP_REQUIRE_POSTGRES=1` (CI sets it) they run and fail instead.
enum PostgresTestCluster {
    /// The cluster's URL (a user who may create databases, and a database to connect to).
    static var url: String? {
        ProcessInfo.processInfo.environment["ROOFTOP_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether a missing cluster must fail the tests rather than skip them.
    static var required: Bool { ProcessInfo.processInfo.environment["ROOFTOP_REQUIRE_POSTGRES"] == "1" }

    static let skipNotice =
        "PostgreSQL tests SKIPPED: no cluster. Run them with `Tests/postgres/with-cluster.sh swift test`."

    private static let announced = Mutex(false)

    /// Whether the PostgreSQL tests run; when they do not, the notice is printed (once).
    static var enabled: Bool {
        if url != nil || required { return true }
        let first = announced.withLock { announced in
            defer { announced = true }
            return !announced
        }
        if first {
            FileHandle.standardError.write(Data("\n*** \(skipNotice) ***\n\n".utf8))
        }
        return false
    }

    /// Runs `body` with the URL of a new, empty database of its own, dropped afterwards.
    static func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        guard let url else {
            throw ClusterError("ROOFTOP_REQUIRE_POSTGRES=1 but ROOFTOP_TEST_POSTGRES_URL is not set")
        }
        let name = "rooftop_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try PostgresPool(url: url, maximumConnections: 1, logger: Logger(label: "postgres-tests"))
        do {
            try await admin.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
            let result: Result<T, any Error>
            do {
                result = .success(try await body(try database(name, in: url)))
            } catch {
                result = .failure(error)
            }
            try await admin.client.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)"))
            await admin.close()
            return try result.get()
        } catch {
            await admin.close()
            throw error
        }
    }

    /// Runs `body` with `count` pools (as many servers) on a new database of its own; closes them
    /// and drops the database afterwards, whether `body` succeeded or not.
    static func withPools<T>(
        _ count: Int = 1, connections: Int = 2, logger: Logger, _ body: ([PostgresPool]) async throws -> T
    ) async throws -> T {
        try await withDatabase { url in
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

    /// `url` with its database replaced by `name`.
    static func database(_ name: String, in url: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw ClusterError("not a URL: \(url)") }
        components.path = "/" + name
        guard let changed = components.string else { throw ClusterError("cannot name database \(name) in \(url)") }
        return changed
    }

    struct ClusterError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
