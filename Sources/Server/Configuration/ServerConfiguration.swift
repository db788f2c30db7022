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
    /// The bcrypt cost for passwords (default 10; tests may lower it to 4).
    public var bcryptCost: UInt8 = 10
    /// The log level (default `info`).
    public var logLevel: Logger.Level = .info

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

    /// The storage URL in effect (the configured one, or SQLite in the data directory).
    public var effectiveStorageURL: String {
        storageURL ?? "sqlite:\(dataDirectory)/rooftop.sqlite"
    }
}
