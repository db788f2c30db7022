import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The PostgreSQL cluster the PostgreSQL tests use: the one `Tests/postgres/with-cluster.sh`
/// starts (its URL in `ROOFTOP_TEST_POSTGRES_URL`). Without one those tests are skipped, and say
/// so loudly; with `ROOFTOP_REQUIRE_POSTGRES=1` (CI sets it) they run and fail instead.
public enum TestPostgres {
    /// The cluster's URL (a user who may create databases, and a database to connect to).
    public static var url: String? {
        ProcessInfo.processInfo.environment["ROOFTOP_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether a missing cluster must fail the tests rather than skip them.
    public static var required: Bool { ProcessInfo.processInfo.environment["ROOFTOP_REQUIRE_POSTGRES"] == "1" }

    public static let skipNotice =
        "PostgreSQL tests SKIPPED: no cluster. Run them with `Tests/postgres/with-cluster.sh swift test`."

    private static let announced = Mutex(false)

    /// Whether the PostgreSQL tests run; when they do not, the notice is printed (once).
    public static var enabled: Bool {
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

    /// Creates a new, empty database; returns its URL.
    /// - Throws: ``ClusterError`` without a cluster; what the cluster answers.
    public static func createDatabase() async throws -> String {
        guard let url else {
            throw ClusterError("ROOFTOP_REQUIRE_POSTGRES=1 but ROOFTOP_TEST_POSTGRES_URL is not set")
        }
        let name = "rooftop_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await administer(url) { try await $0.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)")) }
        return try database(name, in: url)
    }

    /// Drops a database ``createDatabase()`` made, closing its connections.
    /// - Throws: ``ClusterError`` for a database it did not make; what the cluster answers.
    public static func dropDatabase(url database: String) async throws {
        guard let url else { throw ClusterError("ROOFTOP_TEST_POSTGRES_URL is not set") }
        guard let name = URLComponents(string: database)?.path.dropFirst(), name.hasPrefix("rooftop_test_"),
            name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
        else { throw ClusterError("not a test database: \(database)") }
        try await administer(url) {
            try await $0.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }

    /// Runs `body` with the URL of a new, empty database of its own, dropped afterwards.
    /// - Throws: What `body` throws; what the cluster answers.
    public static func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        let database = try await createDatabase()
        let result: Result<T, any Error>
        do {
            result = .success(try await body(database))
        } catch {
            result = .failure(error)
        }
        try await dropDatabase(url: database)
        return try result.get()
    }

    /// Runs `body` on a one-connection client of the cluster's own database.
    private static func administer(_ url: String, _ body: (PostgresClient) async throws -> Void) async throws {
        guard let components = URLComponents(string: url), let host = components.host, let user = components.user
        else { throw ClusterError("not a PostgreSQL URL: \(url)") }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
        configuration.options.maximumConnections = 1
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "postgres-tests"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await body(client)
        }
    }

    /// `url` with its database replaced by `name`.
    static func database(_ name: String, in url: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw ClusterError("not a URL: \(url)") }
        components.path = "/" + name
        guard let changed = components.string else { throw ClusterError("cannot name database \(name) in \(url)") }
        return changed
    }

    /// Why the cluster cannot be used.
    public struct ClusterError: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }
}
