import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization
import RooftopTestSupport

/// Everything an end-to-end sync test starts — servers, API clients and ``RooftopClient``s —
/// tracked so that ``withSyncHarness(_:)`` shuts it all down on every path, in reverse order.
///
/// ```swift
/// try await withSyncHarness { harness in
///     let server = try await harness.startServer()
///     let client = try await harness.client(server, file: harness.cacheFile("a"))
/// }
/// ```
final class ClientSyncHarness: Sendable {
    private enum Resource: Sendable {
        case server(ServerProcess)
        case api(APIClient)
        case client(RooftopClient)
    }

    private let resources = Mutex<[Resource]>([])
    /// A directory for this test's cache files.
    let cacheDirectory = TemporaryDirectory.make(prefix: "client-sync-cache")

    /// A path for a cache file named `name` in ``cacheDirectory``.
    func cacheFile(_ name: String) -> String { cacheDirectory + "/\(name).sqlite" }

    private func track(_ resource: Resource) {
        resources.withLock { $0.append(resource) }
    }

    /// Starts a server (fresh, or on a data directory and a fixed port: a restart).
    func startServer(dataDirectory: String? = nil, port: Int? = nil, extraArguments: [String] = []) async throws
        -> ServerProcess
    {
        let server = try await ServerProcess.start(
            dataDirectory: dataDirectory, extraArguments: (port.map { ["--port", "\($0)"] } ?? []) + extraArguments)
        track(.server(server))
        return server
    }

    /// Starts a fresh server on a fixed port below the range the system hands out (32768 and up
    /// on Linux), for a test that stops it and starts it again on the same port: no server of
    /// another test (port 0) and no connection can take the port while it is down. A port taken
    /// already is replaced by another, at most ten times.
    func startServerOnFixedPort() async throws -> ServerProcess {
        var attempts = 0
        while true {
            let port = Int.random(in: 20_000..<32_000)
            do {
                return try await startServer(port: port)
            } catch ServerLaunchError.exited(_, let log) where log.contains("Address already in use") && attempts < 10 {
                attempts += 1
            }
        }
    }

    /// Stops a server started here (SIGTERM, then waits for the exit).
    func stop(_ server: ServerProcess) async {
        await server.stop()
    }

    /// A shareable datastore owned by a new user whose client (`writer`, on `writerServer`)
    /// writes, and a viewer whose client (`watcher`, on `watcherServer`) syncs it continuously,
    /// connected when this returns.
    func liveWatch(writerServer: ServerProcess, watcherServer: ServerProcess) async throws -> LiveWatch {
        let api = try api(writerServer)
        let (owner, guest) = (try await api.newUser("owner"), try await api.newUser("guest"))
        let datastore = try await api.shareableDatastore(owner: owner, sharedWith: [guest], role: .viewer)
        let writer = try await client(writerServer, file: cacheFile("writer"))
        let watcher = try await client(watcherServer, file: cacheFile("watcher"))
        _ = try await writer.logIn(owner)
        _ = try await watcher.logIn(guest)
        let watched = try await watcher.datastores.open(datastore)
        try await watcher.sync.startContinuous(datastores: [datastore])
        try await TestWait.until("the watcher is connected") { try watched.currentStatus().connected }
        return LiveWatch(api: api, owner: owner, guest: guest, datastore: datastore, writer: writer, watcher: watcher)
    }

    /// An admin-side REST client of a server.
    func api(_ server: ServerProcess) throws -> APIClient {
        let api = try APIClient(server: server)
        track(.api(api))
        return api
    }

    /// A client of the real library talking to `server` over TLS (trusting only its CA), storing
    /// its local datastore in `file` (in memory when `nil`).
    /// - Parameter retry: The offline queue's retry policy (default: short delays, so that a
    ///   queue drains soon after the server is back).
    func client(
        _ server: ServerProcess, file: String? = nil, retry: RetryPolicy = ClientSyncHarness.quickRetry
    ) async throws -> RooftopClient {
        let client = try await RooftopClient(configuration: configuration(server, file: file, retry: retry))
        track(.client(client))
        return client
    }

    /// A client like ``client(_:file:retry:)`` that reaches the server through `proxy` (the
    /// server's certificate is for `127.0.0.1`, so it is valid on the proxy's port too).
    func client(
        _ server: ServerProcess, through proxy: FaultProxy, file: String? = nil,
        retry: RetryPolicy = ClientSyncHarness.quickRetry, requestTimeout: Duration = .seconds(30)
    ) async throws -> RooftopClient {
        var configuration = try configuration(server, file: file, retry: retry)
        guard let url = URL(string: "https://127.0.0.1:\(proxy.port)") else { throw FixtureError("bad proxy URL") }
        configuration.serverURL = url
        configuration.requestTimeout = requestTimeout
        let client = try await RooftopClient(configuration: configuration)
        track(.client(client))
        return client
    }

    /// A client like ``client(_:file:retry:)`` whose requests go through a ``SyncTestTransport``
    /// (pull page size, pushes held back, request counts). It has no live WebSocket.
    func controlledClient(
        _ server: ServerProcess, file: String? = nil, retry: RetryPolicy = ClientSyncHarness.quickRetry,
        pullPageSize: Int? = nil, blockingPushes: Bool = false, bulkInitialSync: Bool = false
    ) throws -> (RooftopClient, SyncTestTransport) {
        var configuration = try configuration(server, file: file, retry: retry)
        configuration.bulkInitialSync = bulkInitialSync
        let transport = try SyncTestTransport(configuration: configuration, pullPageSize: pullPageSize)
        transport.blocksPushes = blockingPushes
        let client = try RooftopClient(configuration: configuration, transport: transport)
        track(.client(client))
        return (client, transport)
    }

    private func configuration(_ server: ServerProcess, file: String?, retry: RetryPolicy) throws -> ClientConfiguration {
        var configuration = try ClientTransportFixture.configuration(server)
        configuration.storage = file.map { .file(path: $0) } ?? .inMemory
        configuration.retry = retry
        return configuration
    }

    /// Shuts a client down now (as when the app quits); the harness will not do it again.
    func shutdown(_ client: RooftopClient) async {
        resources.withLock { list in
            list.removeAll { if case .client(let other) = $0 { other === client } else { false } }
        }
        await client.shutdown()
    }

    /// Shuts everything down, newest first.
    func tearDown() async {
        let all = resources.withLock { list in
            defer { list = [] }
            return list
        }
        for resource in all.reversed() {
            switch resource {
            case .client(let client): await client.shutdown()
            case .api(let api): await api.shutdown()
            case .server(let server): await server.stop()
            }
        }
    }

    /// Retries after 50 ms, up to 500 ms, without jitter.
    static let quickRetry = RetryPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(500), jitter: 0)
    /// Retries only after an hour: the queue sends only when told to (``SyncEngine/push(datastore:progress:)``).
    static let manualRetry = RetryPolicy(initialDelay: .seconds(3600), maximumDelay: .seconds(3600), jitter: 0)
}

/// Runs `body` with a harness, tearing down whatever it started on every path.
func withSyncHarness<T>(_ body: (ClientSyncHarness) async throws -> T) async throws -> T {
    try await scoped(ClientSyncHarness(), release: { await $0.tearDown() }, body)
}

/// Runs `body`, failing with a ``FixtureError`` when it has not finished within `limit` (the
/// body is cancelled then). For awaiting things that have no deadline of their own, such as
/// ``Outbox/waitUntilIdle()``.
func withDeadline<T: Sendable>(
    _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw FixtureError("\(what) did not happen within \(limit)")
        }
        return result
    }
}

/// What ``ClientSyncHarness/liveWatch(writerServer:watcherServer:)`` sets up.
struct LiveWatch {
    let api: APIClient
    let owner: TestUser
    let guest: TestUser
    let datastore: DatastoreID
    let writer: RooftopClient
    let watcher: RooftopClient
}

/// A value shared between a test and callbacks it hands out (a `Mutex` cannot be captured).
final class SyncLocked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    /// The value now.
    var current: Value { value.withLock { $0 } }

    /// Changes the value.
    func update(_ body: (inout Value) -> Void) { value.withLock { body(&$0) } }
}

extension RooftopClient {
    /// The IDs of the objects of a class stored locally, as the current user may read them (or
    /// all of them with `ignoringACLs`).
    func localIds(_ className: String, in datastore: DatastoreID, ignoringACLs: Bool = false) async throws -> Set<String> {
        var query = self.query(className, in: datastore).fromLocalDatastore()
        if ignoringACLs { query = query.ignoringACLs() }
        return Set(try await query.find().objectIds)
    }

    /// The IDs of the objects of a class the server lets the current user see.
    func remoteIds(_ className: String, in datastore: DatastoreID) async throws -> Set<String> {
        Set(try await query(className, in: datastore).limit(1000).find().objectIds)
    }

    /// Whether the local datastore has the object (whatever its ACL says).
    func hasLocalCopy(_ className: String, _ objectId: String, in datastore: DatastoreID) async -> Bool {
        (try? await query(className, in: datastore).fromLocalDatastore().ignoringACLs().getObject(objectId)) != nil
    }

    /// Logs in as a user made with ``APIClient/newUser(_:password:)``.
    @discardableResult
    func logIn(_ user: TestUser) async throws -> UserInfo {
        try await logIn(username: user.username, password: user.password)
    }
}
