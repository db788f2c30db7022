import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import Metrics
import NIOCore
import NIOSSL
import Prometheus
import RooftopShared
import ServiceLifecycle
import UnixSignals

/// The Rooftop reference server: HTTPS and WebSocket on one TLS port, over a ``Storage``.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.port = 0
/// let server = try await RooftopServer.start(configuration: configuration) { print($0) }
/// try await server.run()        // until SIGTERM or SIGINT; finishes in-flight requests
/// ```
public final class RooftopServer: Sendable {
    /// The configuration in effect.
    public let configuration: ServerConfiguration
    let storage: any Storage
    let services: ServerServices
    private let output: @Sendable (String) -> Void
    private let tlsConfiguration: TLSConfiguration?
    private let logger: Logger
    private let connectionRegistry: ConnectionRegistry
    private let lock: DataDirectoryLock?

    private init(
        configuration: ServerConfiguration, storage: any Storage, services: ServerServices,
        tlsConfiguration: TLSConfiguration?, output: @escaping @Sendable (String) -> Void, logger: Logger,
        connectionRegistry: ConnectionRegistry, lock: DataDirectoryLock?
    ) {
        self.connectionRegistry = connectionRegistry
        self.lock = lock
        self.configuration = configuration
        self.storage = storage
        self.services = services
        self.tlsConfiguration = tlsConfiguration
        self.output = output
        self.logger = logger
    }

    /// Prepares everything the server needs: the data directory, the storage and its schema, the
    /// admin key, TLS (a development CA on first start when no certificate is configured).
    /// - Parameters:
    ///   - configuration: The configuration.
    ///   - output: Where to print the lines an operator must see (development CA path, a newly
    ///     generated admin key, the listening address).
    /// - Throws: Configuration, storage and TLS errors.
    public static func start(
        configuration: ServerConfiguration, output: @escaping @Sendable (String) -> Void = { print($0) }
    ) async throws -> RooftopServer {
        try configuration.validate()
        var logger = Logger(label: "rooftop-server")
        logger.logLevel = configuration.logLevel
        try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)

        // One server per embedded database: a second one would corrupt nothing (SQLite locks)
        // but would answer from a feed another process writes; a restore waits for both.
        let lock = try StorageFactory.sqlitePath(url: configuration.effectiveStorageURL).map { path throws(RooftopError) in
            try DataDirectoryLock(directory: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
        let storage = try StorageFactory.open(
            url: configuration.effectiveStorageURL, clock: configuration.clock, queryTimeout: configuration.requestTimeout,
            logger: logger)
        try await storage.prepare()
        let adminKeyHash = try await AdminKey.resolve(configured: configuration.adminKey, storage: storage, output: output)
        let tlsConfiguration = try TLSSetup.configuration(for: configuration, output: output)
        _ = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
        let services = try await ServerServices.make(
            storage: storage, configuration: configuration, adminKeyHash: adminKeyHash, logger: logger)
        let fileLimit = OpenFileLimit.raise()
        let registry = ConnectionRegistry(
            maxConnections: configuration.connections.effectiveMaxConnections(fileLimit: fileLimit),
            maxConnectionsPerAddress: configuration.connections.maxConnectionsPerAddress,
            exempt: services.proxies, logger: logger)
        logger.info(
            "connection caps",
            metadata: [
                "open-file limit": "\(fileLimit)", "max connections": "\(registry.maxConnections)",
                "per address": "\(registry.maxConnectionsPerAddress)",
            ])
        return RooftopServer(
            configuration: configuration, storage: storage, services: services, tlsConfiguration: tlsConfiguration,
            output: output, logger: logger, connectionRegistry: registry, lock: lock)
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting connections, finishes in-flight
    /// requests, closes live connections and the storage, and returns.
    public func run() async throws {
        let application = try makeApplication()
        try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        await services.live.disconnectAll()
        try await storage.close()
        lock?.release()
    }

    func makeApplication() throws -> some ApplicationProtocol {
        let router = APIRouter(services: services, configuration: configuration).build()
        let scheme = tlsConfiguration == nil ? "http" : "https"
        let host = configuration.host
        let output = self.output
        let onServerRunning: @Sendable (any Channel) async -> Void = { channel in
            let port = channel.localAddress?.port ?? 0
            let shown = host.contains(":") ? "[\(host)]" : host
            output("listening on \(scheme)://\(shown):\(port)")
        }
        let live = LiveEndpoint(services: services, appId: configuration.appId)
        let limits = configuration.connections
        let headers = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes,
            maxHeaderFieldCount: 200)
        let server = HTTPServerBuilder.guarded(
            http1: .init(
                http1: .init(httpDecoderConfiguration: headers),
                // Live connections are pinged every 30 s and closed when the client stops answering.
                ws: .init(maxFrameSize: 1 << 20, autoPing: .enabled(timePeriod: .seconds(30)))),
            tls: tlsConfiguration, registry: connectionRegistry, limits: limits,
            maxRequestBodyBytes: configuration.limits.maxRequestBodyBytes
        ) { request, channel, logger in
            try await live.shouldUpgrade(request, channel: channel, logger: logger)
        }
        var services: [any Service] = [
            SessionSweeper(storage: storage, interval: .seconds(3600), clock: configuration.clock, logger: logger),
            HistorySweeper(
                storage: storage, retention: configuration.historyRetention,
                interval: configuration.historySweepInterval, clock: configuration.clock, logger: logger),
        ]
        if let notifier = self.services.cluster.notifier {
            services.append(ClusterListener(notifier: notifier, services: self.services, logger: logger))
        }
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: services,
            onServerRunning: onServerRunning,
            logger: logger)
    }
}
