import Foundation
import RooftopShared

/// Everything a ``RooftopClient`` needs: where the server is, which app this is, what to trust,
/// where to keep the local datastore, and how to retry.
///
/// ```swift
/// var configuration = ClientConfiguration(serverURL: URL(string: "https://127.0.0.1:8443")!)
/// configuration.trust = .certificateAuthority(pem: try String(contentsOfFile: caPath, encoding: .utf8))
/// configuration.storage = .file(path: cacheURL.path)
/// let client = try await RooftopClient(configuration: configuration)
/// ```
public struct ClientConfiguration: Sendable {
    /// The server's base URL, e.g. `https://rooftop.example.com` (HTTPS; plain HTTP only for a
    /// server started with `--insecure-http`).
    public var serverURL: URL
    /// The application ID sent with every request (default `rooftop`).
    public var appId: String = "rooftop"
    /// Which certificates to trust for the server (default: the system's roots).
    public var trust: TrustPolicy = .systemRoots
    /// Where the local datastore lives (default: in memory, gone when the client is).
    public var storage: LocalStorage = .inMemory
    /// How failed sends of the offline queue are retried (default ``RetryPolicy/default``).
    public var retry: RetryPolicy = .default
    /// How long one request may take before it fails with `timeout` (default 30 seconds).
    public var requestTimeout: Duration = .seconds(30)
    /// The clock that times retries; inject a test clock to test backoff without waiting
    /// (default: the continuous clock).
    public var clock: any Clock<Duration> = ContinuousClock()
    /// The limits the client checks before queueing a change (default: a server's defaults,
    /// `Limits.default`): a change that would make a record larger than `maxRecordBytes` is
    /// refused (``RooftopObject/saveEventually()`` throws `sizeLimit`) instead of queued for the
    /// server to refuse. The client does not ask the server for its limits: for a server started
    /// with others (`ROOFTOP_MAX_RECORD_BYTES`), set them to what its `GET /v1/info` states.
    public var limits: Limits = .default
    /// Whether a first sync of many changes (20,000 or more) is written as a bulk load (default
    /// `false`).
    ///
    /// Each object of a class that declares indexes has an entry per index, at a random place in
    /// a tree far larger than one write touches: written object by object, most of a large
    /// sync's time goes to rewriting that tree's pages. A bulk load writes objects without their
    /// entries and builds those in sorted passes (one after every 10,000 objects stored, or a
    /// quarter of those built, whichever is more; the last when the pull catches up). Measured
    /// with four declared indexes (docs/benchmarks.md): a first sync of 100,000 objects ran 1.4
    /// to 1.5 times as fast, one of 1,000,000 1.75 times. Meanwhile local queries of that
    /// datastore still answer every stored object, but read the objects stored since the last
    /// pass from their documents (about 50 ms at 100,000 objects instead of 1.3 ms), and a save
    /// waits for a pass to end (up to a second at 100,000 objects, up to 15 seconds at a
    /// million). Choose it when the app shows its first sync's progress rather than working in
    /// that datastore while it runs.
    ///
    /// ```swift
    /// configuration.bulkInitialSync = true
    /// let loaded = try await client.sync.pull(datastore: .app) { progress in show(progress) }
    /// ```
    public var bulkInitialSync = false

    /// When a pull is loaded in bulk, and how often its passes run, with ``bulkInitialSync`` on
    /// (for tests, which load a few objects; default ``BulkLoadThresholds/init(threshold:passSize:growth:)``).
    @_spi(Testing) public var bulkLoadThresholds = BulkLoadThresholds()

    /// A configuration for a server, with the defaults for everything else.
    public init(serverURL: URL) {
        self.serverURL = serverURL
    }
}

/// Where the client keeps its local datastore.
public enum LocalStorage: Sendable, Hashable {
    /// In memory only: nothing survives the client.
    case inMemory
    /// A SQLite file (created if missing). Two clients must not share a file.
    case file(path: String)
}
