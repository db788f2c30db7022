import Foundation
import Logging
import NIOPosix
import PostgresNIO
import RooftopShared

/// A PostgreSQL database as the server uses it: a pool of connections (postgres-nio's
/// `PostgresClient`, run for as long as the database is open) and its schema migrated.
///
/// ```swift
/// let pool = try PostgresPool(url: "postgres://rooftop@127.0.0.1:5432/rooftop", logger: logger)
/// try await pool.migrate()
/// await pool.close()
/// ```
final class PostgresPool: Sendable {
    /// The connection pool.
    let client: PostgresClient
    let logger: Logger
    /// Threads for synchronous transactions (``blockingTransaction(_:)``), one per connection.
    let threads: NIOThreadPool
    /// The schema the storage's tables are in (`?schema=` in the URL), `nil` for the default
    /// (`public`).
    let schema: String?
    private let runner: Task<Void, Never>

    /// Opens a pool for a `postgres://` (or `postgresql://`) URL; connections are made as they
    /// are needed.
    /// - Throws: `illegalArgument` when the URL is not a PostgreSQL URL (see ``configuration(url:)``).
    init(url: String, maximumConnections: Int = 20, logger: Logger) throws(RooftopError) {
        var configuration = try Self.configuration(url: url)
        configuration.options.maximumConnections = maximumConnections
        schema = configuration.options.additionalStartupParameters.first { $0.0 == "search_path" }?.1
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        threads = NIOThreadPool(numberOfThreads: maximumConnections)
        threads.start()
        runner = Task { await client.run() }
    }

    /// Applies the migrations not applied yet (``PostgresMigrations``).
    /// - Throws: What the database answers when a migration fails (nothing of that migration
    ///   stays).
    func migrate() async throws {
        try await PostgresMigrations.migrate(client, schema: schema, logger: logger)
    }

    /// Closes every connection; the database cannot be used afterwards.
    func close() async {
        runner.cancel()
        await runner.value
        // Nothing runs on the threads once the client is closed: shutting them down cannot fail
        // but for a pool already shut down.
        try? await threads.shutdownGracefully()
    }

    /// The client configuration a URL names: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`,
    /// with `?sslmode=disable`, `prefer` (the default: TLS when the server offers it) or `require`,
    /// and `&schema=NAME` to keep the tables in a schema of their own (letters, digits and `_`;
    /// created when missing), so that several deployments can share one database.
    /// - Throws: `illegalArgument` naming what is wrong.
    static func configuration(url: String) throws(RooftopError) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            ["postgres", "postgresql"].contains(scheme.lowercased())
        else {
            throw RooftopError(
                .illegalArgument, "not a PostgreSQL URL: use postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        guard let host = components.host, !host.isEmpty else {
            throw RooftopError(.illegalArgument, "the PostgreSQL URL names no host")
        }
        guard let user = components.user, !user.isEmpty else {
            throw RooftopError(.illegalArgument, "the PostgreSQL URL names no user")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else {
            throw RooftopError(.illegalArgument, "the PostgreSQL URL names no database")
        }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else {
            throw RooftopError(.illegalArgument, "the PostgreSQL URL's port \(port) is out of range")
        }
        let tls: PostgresClient.Configuration.TLS
        switch components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer" {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        case let mode:
            throw RooftopError(.illegalArgument, "unknown sslmode '\(mode)': use disable, prefer or require")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 }, database: database, tls: tls)
        let schema = components.queryItems?.first(where: { $0.name == "schema" })?.value
        // Names the deployment's connections: a pull does not wait for transactions of others
        // (``PostgresStatements/feedBound``).
        configuration.options.additionalStartupParameters.append(
            ("application_name", "rooftop " + (schema?.lowercased() ?? "public")))
        if let schema {
            guard !schema.isEmpty, schema.count <= 63, schema.first?.isNumber == false,
                schema.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") })
            else {
                throw RooftopError(.illegalArgument, "the schema '\(schema)' must be 1 to 63 ASCII letters, digits or _")
            }
            configuration.options.additionalStartupParameters.append(("search_path", schema.lowercased()))
        }
        return configuration
    }
}
