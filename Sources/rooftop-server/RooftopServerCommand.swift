import ArgumentParser
import Foundation
import Logging
import RooftopServer
import RooftopShared

@main
struct RooftopServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooftop-server",
        abstract: "The Rooftop reference sync server.",
        version: RooftopServerInfo.version,
        subcommands: [Serve.self, DevCerts.self, Backup.self, Restore.self, Admin.self],
        defaultSubcommand: nil
    )
}

/// `rooftop-server serve`: runs the server until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the server.",
        discussion: """
            Every option can also be set with the environment variable named in its help. On a fresh \
            data directory with no certificate given, the server creates a development CA and a \
            certificate for localhost, 127.0.0.1 and ::1, and prints "development CA: <path>".
            """)

    @Option(help: "Address to bind. [env: ROOFTOP_HOST]")
    var host: String?

    @Option(help: "Port to bind; 0 picks a free one. [env: ROOFTOP_PORT]")
    var port: Int?

    @Option(help: "Directory for the database, certificates and state. [env: ROOFTOP_DATA_DIR]")
    var dataDir: String?

    @Option(help: "TLS certificate chain (PEM). [env: ROOFTOP_TLS_CERT]")
    var tlsCert: String?

    @Option(help: "TLS private key (PEM). [env: ROOFTOP_TLS_KEY]")
    var tlsKey: String?

    @Flag(help: "Serve plain HTTP instead of HTTPS (development only). [env: ROOFTOP_INSECURE_HTTP=1]")
    var insecureHTTP = false

    @Option(
        help:
            "Storage URL: sqlite:/var/lib/rooftop/rooftop.sqlite (default: in the data directory) or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require] for several server processes. [env: ROOFTOP_STORAGE_URL]"
    )
    var storage: String?

    @Option(help: "Application ID clients must send. [env: ROOFTOP_APP_ID]")
    var appId: String?

    @Option(help: "Admin (master) key; generated and printed once when never set. [env: ROOFTOP_ADMIN_KEY]")
    var adminKey: String?

    @Option(help: "Largest record, in bytes. [env: ROOFTOP_MAX_RECORD_BYTES]")
    var maxRecordBytes: Int?

    @Option(help: "Most records per datastore. [env: ROOFTOP_MAX_RECORDS_PER_DATASTORE]")
    var maxRecordsPerDatastore: Int?

    @Option(help: "Largest datastore, in bytes. [env: ROOFTOP_MAX_DATASTORE_BYTES]")
    var maxDatastoreBytes: Int?

    @Option(help: "Largest push, in bytes. [env: ROOFTOP_MAX_PUSH_BYTES]")
    var maxPushBytes: Int?

    @Option(help: "Largest request body, in bytes. [env: ROOFTOP_MAX_REQUEST_BODY_BYTES]")
    var maxRequestBodyBytes: Int?

    @Option(help: "Changes per pull page when the client names none (1-1000, default 500). [env: ROOFTOP_DEFAULT_PULL_PAGE_SIZE]")
    var defaultPullPageSize: Int?

    @Option(help: "bcrypt cost for passwords (4-31). [env: ROOFTOP_BCRYPT_COST]")
    var bcryptCost: UInt8?

    @Option(help: "Seconds from accepting a connection to its first request's headers (default 10). [env: ROOFTOP_REQUEST_HEAD_TIMEOUT]")
    var requestHeadTimeout: Double?

    @Option(help: "Seconds a kept-alive connection may wait for its next request (default 60). [env: ROOFTOP_IDLE_TIMEOUT]")
    var idleTimeout: Double?

    @Option(help: "Longest pause in seconds while a request body arrives (default 30). [env: ROOFTOP_BODY_READ_TIMEOUT]")
    var bodyReadTimeout: Double?

    @Option(help: "Most datastores one user may own, private and shareable together (default 1000). [env: ROOFTOP_MAX_DATASTORES_PER_USER]")
    var maxDatastoresPerUser: Int?

    @Option(help: "A bearer token GET /metrics requires (at least 16 characters; default: metrics open to all). [env: ROOFTOP_METRICS_TOKEN]")
    var metricsToken: String?

    @Option(help: "Seconds one request may run before it is stopped and answered 503 timeout (default 30). [env: ROOFTOP_REQUEST_TIMEOUT]")
    var requestTimeout: Double?

    @Option(help: "Largest request head (line and headers), in bytes; larger ones get 431 (default 16384). [env: ROOFTOP_MAX_HEADER_BYTES]")
    var maxHeaderBytes: Int?

    @Option(help: "Most open connections (default: the open-file limit less 128). [env: ROOFTOP_MAX_CONNECTIONS]")
    var maxConnections: Int?

    @Option(help: "Most open connections from one address; 0 for none, e.g. behind a load balancer (default 256). [env: ROOFTOP_MAX_CONNECTIONS_PER_ADDRESS]")
    var maxConnectionsPerAddress: Int?

    @Option(help: "Proxies or load balancers whose X-Forwarded-For names the client, comma-separated addresses or ranges, e.g. 10.0.0.0/8,::1 (default none: the TCP peer is the client). [env: ROOFTOP_TRUSTED_PROXIES]")
    var trustedProxies: String?

    @Option(help: "How long sync history is kept: tombstones, merge operations, mutation results; e.g. 30d, 12h, 90s (default 30d). [env: ROOFTOP_HISTORY_RETENTION]")
    var historyRetention: String?

    @Option(help: "Seconds between retention sweeps (default 3600). [env: ROOFTOP_HISTORY_SWEEP_INTERVAL]")
    var historySweepInterval: Double?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical. [env: ROOFTOP_LOG_LEVEL]")
    var logLevel: String?

    @Option(help: "Log format: text (key=value metadata) or json (one object per line). [env: ROOFTOP_LOG_FORMAT]")
    var logFormat: String?

    @Option(
        help:
            "Where requests run: event-loops (on the threads that read and write the connections: fewer thread switches per request) or pool (Swift's default thread pool) (default event-loops). [env: ROOFTOP_EXECUTOR]"
    )
    var executor: String?

    /// Parses a retention such as `30d`, `12h`, `45m` or `90s`: a whole number and a unit,
    /// 1 second to 100 years.
    static func retention(_ text: String) throws -> Duration {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()), count > 0,
            case let (seconds, overflow) = count.multipliedReportingOverflow(by: unit), !overflow,
            seconds <= 100 * 366 * 86_400
        else {
            throw ValidationError("the history retention is a whole number and a unit (s, m, h, d), e.g. 30d; at most 100 years")
        }
        return .seconds(seconds)
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        // First, before the server makes any task.
        let executor = try TaskThreads.choose(setting(self.executor, "ROOFTOP_EXECUTOR"))
        func setting(_ flag: String?, _ name: String) -> String? { flag ?? environment[name] }
        func number<T: FixedWidthInteger>(_ flag: T?, _ name: String) throws -> T? {
            if let flag { return flag }
            guard let text = environment[name] else { return nil }
            guard let value = T(text) else { throw ValidationError("\(name) must be a whole number") }
            return value
        }

        var configuration = ServerConfiguration()
        configuration.host = setting(host, "ROOFTOP_HOST") ?? configuration.host
        configuration.port = try number(port, "ROOFTOP_PORT") ?? configuration.port
        configuration.dataDirectory = setting(dataDir, "ROOFTOP_DATA_DIR") ?? configuration.dataDirectory
        let certificate = setting(tlsCert, "ROOFTOP_TLS_CERT")
        let key = setting(tlsKey, "ROOFTOP_TLS_KEY")
        switch (certificate, key) {
        case (let certificate?, let key?):
            configuration.tls = .init(certificatePath: certificate, privateKeyPath: key)
        case (nil, nil):
            break
        default:
            throw ValidationError("give both --tls-cert and --tls-key, or neither")
        }
        configuration.insecureHTTP = insecureHTTP || environment["ROOFTOP_INSECURE_HTTP"] == "1"
        configuration.storageURL = setting(storage, "ROOFTOP_STORAGE_URL")
        configuration.appId = setting(appId, "ROOFTOP_APP_ID") ?? configuration.appId
        configuration.adminKey = setting(adminKey, "ROOFTOP_ADMIN_KEY")
        if let value = try number(maxRecordBytes, "ROOFTOP_MAX_RECORD_BYTES") { configuration.limits.maxRecordBytes = value }
        if let value = try number(maxRecordsPerDatastore, "ROOFTOP_MAX_RECORDS_PER_DATASTORE") {
            configuration.limits.maxRecordsPerDatastore = value
        }
        if let value = try number(maxDatastoreBytes, "ROOFTOP_MAX_DATASTORE_BYTES") {
            configuration.limits.maxDatastoreBytes = value
        }
        if let value = try number(maxPushBytes, "ROOFTOP_MAX_PUSH_BYTES") { configuration.limits.maxPushBytes = value }
        if let value = try number(maxRequestBodyBytes, "ROOFTOP_MAX_REQUEST_BODY_BYTES") {
            configuration.limits.maxRequestBodyBytes = value
        }
        if let value = try number(defaultPullPageSize, "ROOFTOP_DEFAULT_PULL_PAGE_SIZE") {
            configuration.limits.defaultPullPageSize = value
        }
        if let cost = try number(bcryptCost, "ROOFTOP_BCRYPT_COST") {
            guard (4...31).contains(cost) else { throw ValidationError("the bcrypt cost must be 4-31") }
            configuration.bcryptCost = cost
        }
        func seconds(_ flag: Double?, _ name: String) throws -> Duration? {
            guard let value = try flag ?? environment[name].map({ text throws -> Double in
                guard let value = Double(text) else { throw ValidationError("\(name) must be a number of seconds") }
                return value
            }) else { return nil }
            // Positive and at most a day: the conversion to nanoseconds below cannot overflow.
            guard value > 0, value <= 86_400 else { throw ValidationError("\(name) must be between 0 and 86400 seconds") }
            return .nanoseconds(Int64((value * 1_000_000_000).rounded()))
        }
        if let value = try seconds(requestHeadTimeout, "ROOFTOP_REQUEST_HEAD_TIMEOUT") {
            configuration.connections.requestHeadTimeout = value
        }
        if let value = try seconds(idleTimeout, "ROOFTOP_IDLE_TIMEOUT") { configuration.connections.idleTimeout = value }
        if let value = try seconds(bodyReadTimeout, "ROOFTOP_BODY_READ_TIMEOUT") {
            configuration.connections.bodyReadTimeout = value
        }
        if let value = try seconds(requestTimeout, "ROOFTOP_REQUEST_TIMEOUT") { configuration.requestTimeout = value }
        if let token = setting(metricsToken, "ROOFTOP_METRICS_TOKEN") { configuration.metricsToken = token }
        if let value = try number(maxDatastoresPerUser, "ROOFTOP_MAX_DATASTORES_PER_USER") {
            configuration.maxDatastoresPerUser = value
        }
        if let text = setting(historyRetention, "ROOFTOP_HISTORY_RETENTION") {
            configuration.historyRetention = try Self.retention(text)
        }
        if let value = try seconds(historySweepInterval, "ROOFTOP_HISTORY_SWEEP_INTERVAL") {
            configuration.historySweepInterval = value
        }
        if let value = try number(maxHeaderBytes, "ROOFTOP_MAX_HEADER_BYTES") { configuration.connections.maxHeaderBytes = value }
        if let value = try number(maxConnections, "ROOFTOP_MAX_CONNECTIONS") { configuration.connections.maxConnections = value }
        if let value = try number(maxConnectionsPerAddress, "ROOFTOP_MAX_CONNECTIONS_PER_ADDRESS") {
            configuration.connections.maxConnectionsPerAddress = value
        }
        if let text = setting(trustedProxies, "ROOFTOP_TRUSTED_PROXIES") {
            configuration.trustedProxies = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
        if let level = setting(logLevel, "ROOFTOP_LOG_LEVEL") {
            guard let parsed = Logger.Level(rawValue: level) else { throw ValidationError("unknown log level \(level)") }
            configuration.logLevel = parsed
        }

        let format = setting(logFormat, "ROOFTOP_LOG_FORMAT") ?? "text"
        guard ["text", "json"].contains(format) else { throw ValidationError("the log format is text or json") }
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            if format == "json" { return JSONLogHandler(label: label, logLevel: level) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        executor.log(Logger(label: "rooftop.server"))
        let server = try await RooftopServer.start(configuration: configuration) { line in
            // Lines operators and tests look for, written unbuffered so pipes see them at once.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
        try await server.run()
    }
}

/// `rooftop-server dev-certs`: writes a development CA and a localhost certificate.
struct DevCerts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev-certs",
        abstract: "Write a development CA (ca.pem) and a certificate for localhost, 127.0.0.1 and ::1.")

    @Option(help: "Directory to write ca.pem, server.pem and server-key.pem into.")
    var out: String

    @Option(help: "Extra host name or IP address for the certificate (repeatable).")
    var host: [String] = []

    func run() async throws {
        let files = try DevelopmentCertificates.generate(extraHostNames: host).write(to: out)
        print("development CA: \(files.caCertificatePath)")
        print("certificate: \(files.serverCertificatePath)")
        print("private key: \(files.serverPrivateKeyPath)")
    }
}

/// Where the embedded database of a data directory (or storage URL) is.
struct DatabaseLocation: ParsableArguments {
    @Option(help: "Data directory of the server. [env: ROOFTOP_DATA_DIR]")
    var dataDir: String?

    @Option(help: "Storage URL (sqlite:<path>), when not the data directory's. [env: ROOFTOP_STORAGE_URL]")
    var storage: String?

    /// The SQLite database file.
    func databasePath() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        var configuration = ServerConfiguration()
        configuration.dataDirectory = dataDir ?? environment["ROOFTOP_DATA_DIR"] ?? configuration.dataDirectory
        configuration.storageURL = storage ?? environment["ROOFTOP_STORAGE_URL"]
        guard let path = try StorageFactory.sqlitePath(url: configuration.effectiveStorageURL) else {
            throw ValidationError("backup and restore work on the embedded SQLite storage only")
        }
        return path
    }
}

/// `rooftop-server backup`: a consistent copy of a running (or stopped) server's database.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent copy of the database while the server runs, and check it.",
        discussion: """
            The copy is a snapshot: every write acknowledged before it began, none after. It is \
            checked (SQLite integrity check, migrations, counts) before the command reports success.
            """)

    @OptionGroup var location: DatabaseLocation

    @Option(help: "The backup file to write (must not exist).")
    var out: String

    func run() async throws {
        let report = try SQLiteBackup.backup(databaseAt: try location.databasePath(), to: out)
        print("backup: \(report)")
    }
}

/// `rooftop-server restore`: replaces a stopped server's database with a checked backup.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the database with a backup (the server must be stopped).",
        discussion: "The backup is checked first; an existing database is replaced only with --force.")

    @OptionGroup var location: DatabaseLocation

    @Option(name: .customLong("from"), help: "The backup file to restore.")
    var source: String

    @Flag(help: "Replace an existing database.")
    var force = false

    func run() async throws {
        let path = try location.databasePath()
        let lock = try DataDirectoryLock(directory: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        defer { lock.release() }
        let report = try SQLiteBackup.restore(from: source, to: path, replacing: force)
        print("restored: \(report) -> \(path)")
    }
}
