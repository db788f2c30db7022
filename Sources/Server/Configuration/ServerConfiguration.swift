import Logging
import RooftopShared

/// Everything the server needs to start. Every property has a development-friendly default; the
/// `rooftop-server serve` command fills it from flags and environment variables.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.port = 0                 // any free port
/// configuration.dataDirectory = "/tmp/rooftop"
/// let server = try await RooftopServer(configuration: configuration)
/// ```
public struct ServerConfiguration: Sendable {
    /// The address to bind (default `127.0.0.1`).
    public var host: String = "127.0.0.1"
    /// The port to bind; 0 picks a free one (default 8443).
    public var port: Int = 8443
    /// Where the embedded database, the development certificates and other state live
    /// (default `./rooftop-data`).
    public var dataDirectory: String = "./rooftop-data"
    /// The TLS certificate and key; `nil` uses (and on first start creates) a development CA and
    /// certificate in `<dataDirectory>/tls`.
    public var tls: TLSFiles?
    /// Serve plain HTTP instead of HTTPS. For development only; off by default.
    public var insecureHTTP: Bool = false
    /// Where objects are stored: `sqlite:<path>` (the default is
    /// `sqlite:<dataDirectory>/rooftop.sqlite`).
    public var storageURL: String?
    /// The application ID clients must send in `X-Rooftop-Application-Id` (default `rooftop`).
    public var appId: String = "rooftop"
    /// The admin (master) key, which bypasses ACLs and permissions. When `nil`, the key is
    /// generated on the first start, printed once, and only its hash is stored.
    public var adminKey: String?
    /// Size and count limits, served to clients at `GET /v1/info`.
    public var limits: Limits = Limits()
    /// How long a session lasts after log-in (default 30 days).
    public var sessionLifetime: Duration = .seconds(30 * 86_400)
    /// Failed log-ins allowed per user name and per client address within ``loginThrottleWindow``
    /// before further attempts are refused with `retryLater` (default 5).
    public var loginThrottleAttempts: Int = 5
    /// The window of ``loginThrottleAttempts`` (default 60 seconds).
    public var loginThrottleWindow: Duration = .seconds(60)
    /// The proxies and load balancers in front of the server, as addresses or ranges
    /// (`10.0.0.0/8`, `192.168.1.10`, `fd00::/8`; default none). For a request whose TCP peer is
    /// one of them, the client address (for throttling) is the right-most address in
    /// `X-Forwarded-For` that is not itself a trusted proxy; from any other peer the header is
    /// ignored. Their connections are also exempt from
    /// ``ConnectionLimits/maxConnectionsPerAddress``.
    public var trustedProxies: [String] = []
    /// How long the history that sync builds on is kept (default 30 days): deleted objects'
    /// tombstones, the operations that merges of older base versions read, reader history, and
    /// mutation results (retries answered with the first result). A client that has not pulled
    /// for longer pulls from scratch; a change based on an older version is refused with
    /// `historyExpired`. See docs/server.md, "Retention".
    public var historyRetention: Duration = .seconds(30 * 86_400)
    /// How often the retention sweep runs (default 1 hour; also once at start-up).
    public var historySweepInterval: Duration = .seconds(3600)
    /// How long one HTTP request may run before it is stopped and answered `503` with code
    /// `timeout` (default 30 seconds; between 0.1 second and 1 hour). See
    /// `RequestDeadlineMiddleware`: work committed before the deadline stays, and a retry
    /// finishes the rest. WebSocket connections are not bound by it.
    public var requestTimeout: Duration = .seconds(30)
    /// The most datastores one user may own, private (made on first use) and shareable together;
    /// one more is refused with `quota` (default 1,000).
    public var maxDatastoresPerUser: Int = 1000
    /// A bearer token that `GET /metrics` requires (`Authorization: Bearer TOKEN`), at least 16
    /// characters. `nil` (the default) leaves the metrics open to anyone who reaches the port:
    /// set it, or keep the port from the internet, when they should stay private.
    public var metricsToken: String?
    /// The bcrypt cost for passwords (default 10; tests may lower it to 4).
    public var bcryptCost: UInt8 = 10
    /// The log level (default `info`).
    public var logLevel: Logger.Level = .info
    /// Where sessions, the session sweeper, live notifications and writes read the time
    /// (default the system clock; tests inject their own).
    public var clock: ServerClock = .system
    /// Timeouts and caps that keep idle, slow or numerous connections from exhausting the server.
    public var connections: ConnectionLimits = ConnectionLimits()

    /// A certificate chain and private key in PEM files.
    public struct TLSFiles: Sendable {
        /// The certificate (chain) file.
        public var certificatePath: String
        /// The private key file.
        public var privateKeyPath: String

        /// Names the files.
        public init(certificatePath: String, privateKeyPath: String) {
            self.certificatePath = certificatePath
            self.privateKeyPath = privateKeyPath
        }
    }

    /// The default configuration.
    public init() {}

    /// Checks every setting: the limits, the connection limits, and durations that must be
    /// positive and bounded (so that the times computed from them cannot overflow).
    /// - Throws: ``RooftopError/Code/illegalArgument`` naming the first setting out of range.
    public func validate() throws(RooftopError) {
        try limits.validate()
        try connections.validate()
        let century: Duration = .seconds(100 * 366 * 86_400)
        guard sessionLifetime >= .seconds(1), sessionLifetime <= century else {
            throw RooftopError(.illegalArgument, "sessionLifetime must be between 1 second and 100 years")
        }
        guard loginThrottleWindow >= .seconds(1), loginThrottleWindow <= .seconds(86_400) else {
            throw RooftopError(.illegalArgument, "loginThrottleWindow must be between 1 second and 1 day")
        }
        guard historyRetention >= .seconds(1), historyRetention <= century else {
            throw RooftopError(.illegalArgument, "historyRetention must be between 1 second and 100 years")
        }
        guard historySweepInterval >= .milliseconds(100), historySweepInterval <= .seconds(86_400) else {
            throw RooftopError(.illegalArgument, "historySweepInterval must be between 0.1 second and 1 day")
        }
        guard requestTimeout >= .milliseconds(100), requestTimeout <= .seconds(3600) else {
            throw RooftopError(.illegalArgument, "requestTimeout must be between 0.1 second and 1 hour")
        }
        guard maxDatastoresPerUser >= 1 else {
            throw RooftopError(.illegalArgument, "maxDatastoresPerUser must be at least 1")
        }
        if let metricsToken, metricsToken.utf8.count < 16 {
            throw RooftopError(.illegalArgument, "metricsToken must be at least 16 characters")
        }
        guard loginThrottleAttempts >= 1, loginThrottleAttempts <= 1000 else {
            throw RooftopError(.illegalArgument, "loginThrottleAttempts must be between 1 and 1000")
        }
        _ = try TrustedProxies(trustedProxies)
    }

    /// The storage URL in effect (the configured one, or SQLite in the data directory).
    public var effectiveStorageURL: String {
        storageURL ?? "sqlite:\(dataDirectory)/rooftop.sqlite"
    }
}

/// How long a connection may take at each step, how large request headers may be, and how many
/// connections the server holds at once. A connection that exceeds a timeout is closed. The caps
/// aim at connections that have not yet completed a request (bare TCP, TLS handshakes, requests
/// still arriving): at ``maxConnections`` the oldest of those (else the connection idle longest
/// between keep-alive requests) is closed to make room for a new one, and an address with ``maxConnectionsPerAddress`` of them has its next one closed as soon
/// as it is accepted, before its TLS handshake. Established connections (a completed response,
/// a live WebSocket) never count against the per-address cap.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.connections.requestHeadTimeout = .seconds(5)
/// configuration.trustedProxies = ["10.0.0.0/8"]    // behind a load balancer: its connections are not capped
/// ```
public struct ConnectionLimits: Sendable, Equatable {
    /// From accepting a connection until its first request's headers have arrived, TLS handshake
    /// included (default 10 seconds).
    public var requestHeadTimeout: Duration = .seconds(10)
    /// How long a kept-alive connection may wait between a response and the complete headers of
    /// its next request (default 60 seconds).
    public var idleTimeout: Duration = .seconds(60)
    /// The longest pause while a request body is being received (default 30 seconds).
    public var bodyReadTimeout: Duration = .seconds(30)
    /// The largest request head (request line and headers together), in bytes; larger ones are
    /// answered 431 (default 16 KiB).
    public var maxHeaderBytes: Int = 16 * 1024
    /// The most connections open at once; `nil` (the default) derives it from the process's
    /// open-file limit, keeping ``reservedFileDescriptors`` for the database, logs and files.
    public var maxConnections: Int?
    /// The most connections from one client address that have not yet completed a request;
    /// 0 means no per-address cap. Established connections do not count, and trusted proxies
    /// (``ServerConfiguration/trustedProxies``) are never capped. Default 256.
    public var maxConnectionsPerAddress: Int = 256
    /// File descriptors kept free of connections (default 128).
    public var reservedFileDescriptors: Int = 128

    /// The defaults.
    public init() {}

    /// The connection cap in effect for an open-file limit of `fileLimit`: the configured
    /// ``maxConnections``, never more than the limit less ``reservedFileDescriptors`` (and at
    /// least 1).
    public func effectiveMaxConnections(fileLimit: Int) -> Int {
        let reserve = fileLimit > 2 * reservedFileDescriptors ? reservedFileDescriptors : fileLimit / 2
        let available = max(1, fileLimit - reserve)
        return min(maxConnections ?? available, available)
    }

    /// Checks that every value is usable.
    /// - Throws: ``RooftopError/Code/illegalArgument`` for a timeout that is not positive, a
    ///   header limit under 1 KiB, or a negative cap.
    public func validate() throws(RooftopError) {
        for (name, timeout) in [
            ("requestHeadTimeout", requestHeadTimeout), ("idleTimeout", idleTimeout), ("bodyReadTimeout", bodyReadTimeout),
        ] where timeout <= .zero {
            throw RooftopError(.illegalArgument, "\(name) must be positive")
        }
        guard maxHeaderBytes >= 1024 else { throw RooftopError(.illegalArgument, "maxHeaderBytes must be at least 1024") }
        guard (maxConnections ?? 1) >= 1 else { throw RooftopError(.illegalArgument, "maxConnections must be at least 1") }
        guard maxConnectionsPerAddress >= 0 else {
            throw RooftopError(.illegalArgument, "maxConnectionsPerAddress must be 0 (no cap) or more")
        }
        guard reservedFileDescriptors >= 0 else {
            throw RooftopError(.illegalArgument, "reservedFileDescriptors must not be negative")
        }
    }
}
