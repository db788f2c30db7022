import Foundation
@testable import Rooftop
import RooftopShared
import RooftopTestSupport
import Synchronization

/// The real `rooftop-server` — its own process, over TLS with its test CA, on a free port, with
/// a fresh database — behind the client tests' transport. The server decides every push, merge,
/// refusal and pull as it does in production; the transport in front of it (``FaultTransport``)
/// adds only what a test scripts about the network — offline, lost answers, failures, gates —
/// and records what was sent.
///
/// ```swift
/// try await withRealServer { server in
///     let client = try server.client()
///     _ = try await client.signUpForTest("ann")
///     server.pushGate.close()
/// }
/// ```
final class RealSyncServer: Sendable {
    /// What the transport was told to do, and what it saw.
    private struct Script {
        var offline = false
        var lostPushAnswers = 0
        var failures: [(prefix: String, error: RooftopError)] = []
        var log: [String] = []
        var pushes: [PushRequest] = []
        var pulls: [PullRequest] = []
        var checkpoints: [Checkpoint] = []
        var pageSize: Int?
        var pagesBeforeInterruption: Int?
        var failure: RooftopError?
        var stalls = false
        var cancelled = 0
    }

    /// The server process.
    let process: ServerProcess
    /// Pulls wait here while it is closed (before they reach the server).
    let pullGate = Gate()
    /// Pushes wait here while it is closed (before they reach the server).
    let pushGate = Gate()
    private let script = Mutex(Script())
    /// The harness's own calls (reads, metrics, class settings): no faults, not recorded.
    private let direct: AsyncHTTPTransport
    private let clients = Mutex<[RooftopClient]>([])
    /// The session of the harness's own user (``writer()``), once signed up.
    private let writerSession = Mutex<SessionTokenStore?>(nil)

    private init(process: ServerProcess, direct: AsyncHTTPTransport) {
        self.process = process
        self.direct = direct
    }

    /// Starts a fresh server.
    /// - Throws: What starting the process throws.
    static func start() async throws -> RealSyncServer {
        let process = try await ServerProcess.start()
        do {
            let configuration = try configuration(of: process)
            let direct = try AsyncHTTPTransport(
                baseURL: configuration.serverURL, trust: configuration.trust, timeout: .seconds(60))
            return RealSyncServer(process: process, direct: direct)
        } catch {
            await process.stop()
            throw error
        }
    }

    /// Shuts down the clients made here, then the server. Requests still held at a gate are
    /// turned back; the clients are let go (each one's transport holds this server).
    func stop() async {
        pushGate.drop()
        pullGate.drop()
        let made = clients.withLock { clients in
            defer { clients = [] }
            return clients
        }
        for client in made { await client.shutdown() }
        await direct.shutdown()
        await process.stop()
    }

    /// A client configuration for the server: its URL, application ID and CA.
    static func configuration(of process: ServerProcess) throws -> ClientConfiguration {
        guard let url = URL(string: process.baseURL) else { throw RooftopError(.internal, "bad URL \(process.baseURL)") }
        var configuration = ClientConfiguration(serverURL: url)
        configuration.appId = process.appId
        configuration.trust = .certificateAuthority(pem: try String(contentsOfFile: process.caCertificatePath, encoding: .utf8))
        configuration.requestTimeout = .seconds(60)
        return configuration
    }

    /// A client of the real library over this server's ``FaultTransport``, with a test clock and a
    /// fixed retry jitter (0.5: no spread); shut down by ``stop()`` unless `kept` is false (a test
    /// of a client the app drops: nothing here may hold it).
    func client(
        clock: TestClock = TestClock(), storage: LocalStorage = .inMemory, retry: RetryPolicy = .default,
        kept: Bool = true
    ) throws -> RooftopClient {
        var configuration = try Self.configuration(of: process)
        configuration.storage = storage
        configuration.clock = clock
        configuration.retry = retry
        let transport = FaultTransport(
            server: self,
            inner: try AsyncHTTPTransport(
                baseURL: configuration.serverURL, trust: configuration.trust, timeout: configuration.requestTimeout))
        let client = try RooftopClient(configuration: configuration, transport: transport, random: { 0.5 })
        if kept { clients.withLock { $0.append(client) } }
        return client
    }

    /// Shuts a client made here down now (as when the app quits); ``stop()`` will not again.
    func shutdown(_ client: RooftopClient) async {
        clients.withLock { $0.removeAll { $0 === client } }
        await client.shutdown()
    }

    // MARK: Scripting the network

    /// Whether every request fails with `noConnection` before reaching the server.
    var offline: Bool {
        get { script.withLock { $0.offline } }
        set { script.withLock { $0.offline = newValue } }
    }

    /// Whether requests reach the server; `false` fails them with `noConnection` (``offline``).
    var isOnline: Bool {
        get { !offline }
        set { offline = !newValue }
    }

    /// Makes every request fail with `error` without reaching the server, until `nil` is set
    /// (transport errors such as `timeout` are thrown, others answered with their HTTP status).
    func fail(with error: RooftopError?) { script.withLock { $0.failure = error } }

    /// Makes requests hang until their task is cancelled (they then fail with `cancelled`).
    func stall(_ stalls: Bool) { script.withLock { $0.stalls = stalls } }

    /// How many stalled requests were cancelled.
    var cancelledCount: Int { script.withLock { $0.cancelled } }

    /// `METHOD path?query` of every request sent (or refused here), in order.
    var requests: [String] { script.withLock { $0.log } }

    /// How many requests were sent (or refused here).
    var requestCount: Int { requests.count }

    /// Makes the next `count` pushes reach the server and apply, then lose the answer (`timeout`).
    func loseNextPushAnswers(_ count: Int) { script.withLock { $0.lostPushAnswers += count } }

    /// Makes the next request whose path starts with `prefix` fail with `error` without reaching
    /// the server (transport errors are thrown, others answered with their HTTP status).
    func failNext(_ prefix: String, with error: RooftopError, times: Int = 1) {
        script.withLock { $0.failures += Array(repeating: (prefix, error), count: times) }
    }

    /// Drops the failures `failNext` queued and not yet served.
    func clearFailures() { script.withLock { $0.failures = [] } }

    /// Every push that went to the server (past the gate, not failed here), in order.
    var pushes: [PushRequest] { script.withLock { $0.pushes } }

    /// Every pull that went to the server (past the gate, not failed here), in order.
    var pulls: [PullRequest] { script.withLock { $0.pulls } }

    /// The checkpoint of every pull page the server answered, in order.
    var pageCheckpoints: [Checkpoint] { script.withLock { $0.checkpoints } }

    /// The most changes a pull asks for (the client never names a page size; `nil`: the
    /// server's default).
    func setPageSize(_ size: Int?) { script.withLock { $0.pageSize = size } }

    /// Makes one pull fail with `network` once this many more pages have been answered.
    func interruptPulls(afterPages pages: Int) { script.withLock { $0.pagesBeforeInterruption = pages } }

    /// `METHOD path` of every request sent (or refused here), in order, without query strings.
    var requestLog: [String] { script.withLock { $0.log.map { String($0.prefix { $0 != "?" }) } } }

    // MARK: Reading and setting the server

    /// The object as the server holds it, read with `client`'s session (`nil`: not there or not
    /// readable by its user).
    /// - Throws: When the server cannot be read.
    func object(_ key: ObjectKey, as client: RooftopClient) async throws -> ObjectSnapshot? {
        do {
            return try await api(as: client).object(key, includes: []).object
        } catch where error.code == .notFound {
            return nil
        }
    }

    /// Pushes `mutations` with `client`'s session, around its transport (as another connection of
    /// the same user: the request its own push would have made, say).
    /// - Throws: When the push fails as a whole.
    @discardableResult
    func push(_ mutations: [Mutation], as client: RooftopClient) async throws -> PushResponse {
        try await api(as: client).push(PushRequest(mutations: mutations))
    }

    /// Creates `count` objects of a class as another device of `client`'s user would (IDs
    /// `<class in lower case><index>`, fields from `fields`).
    /// - Returns: Their keys.
    /// - Throws: When the push fails or refuses one.
    @discardableResult
    func seed(
        _ count: Int, className: String = "Item", in datastore: DatastoreID = .default, as client: RooftopClient,
        fields: (Int) -> [String: Value] = { ["i": .int(Int64($0))] }
    ) async throws -> [ObjectKey] {
        let keys = (0..<count).map {
            ObjectKey(datastore: datastore, className: className, objectId: "\(className.lowercased())\($0)")
        }
        let mutations = keys.indices.map { index in
            let updates = fields(index).sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
            return Mutation(datastore: datastore, className: className, objectId: keys[index].objectId, change: .update(updates))
        }
        // In pushes of at most the server's limit.
        for start in stride(from: 0, to: mutations.count, by: 500) {
            try Self.applied(try await push(Array(mutations[start..<min(start + 500, mutations.count)]), as: client))
        }
        return keys
    }

    /// Changes an object as another device of `client`'s user would, on its current version.
    /// - Throws: When the object cannot be read, or the change is refused.
    @discardableResult
    func update(_ key: ObjectKey, as client: RooftopClient, _ updates: [FieldUpdate]) async throws -> MutationResult {
        try await change(key, as: client, .update(updates))
    }

    /// Deletes an object as another device of `client`'s user would.
    /// - Throws: When the object cannot be read, or the delete is refused.
    func delete(_ key: ObjectKey, as client: RooftopClient) async throws {
        try await change(key, as: client, .delete)
    }

    @discardableResult
    private func change(_ key: ObjectKey, as client: RooftopClient, _ change: ObjectChange) async throws -> MutationResult {
        let version = try await object(key, as: client)?.version
        let mutation = Mutation(
            datastore: key.datastore, className: key.className, objectId: key.objectId, baseVersion: version, change: change)
        let response = try await push([mutation], as: client)
        try Self.applied(response)
        guard let result = response.results.first else { throw RooftopError(.response, "no result for \(key)") }
        return result
    }

    /// Takes an object away from `client`'s user as a change of its ACL would (it may still write
    /// it, no longer read it): its next pull brings a removal.
    /// - Throws: When the object cannot be read, or the change is refused.
    func hide(_ key: ObjectKey, from client: RooftopClient) async throws {
        guard let user = client.currentUser?.objectId else { throw RooftopError(.auth, "the client is not signed in") }
        let writeOnly = ACL([.user(user): ACL.Access(read: false, write: true)])
        try await change(key, as: client, .update([], acl: writeOnly))
    }

    /// Deletes a datastore with `client`'s session (its owner's): pulls of it answer `notFound`.
    /// - Throws: When the server refuses.
    func deleteDatastore(_ id: DatastoreID, as client: RooftopClient) async throws {
        try await api(as: client).deleteDatastore(id)
    }

    /// Sets the indexes a class declares (its other settings stay).
    /// - Throws: When the admin call fails.
    func setIndexes(_ indexes: [[String]], for className: String) async throws {
        try await changeClass(className, ClassSettingsChange(className: className, indexes: indexes))
    }

    /// Throws the first refusal among a push's results.
    private static func applied(_ response: PushResponse) throws {
        for case .rejected(_, let error) in response.results { throw error }
    }

    /// Sets a class's merge rules (its other settings stay).
    /// - Throws: When the admin call fails.
    func setRules(_ rules: [String: MergeRule], for className: String) async throws {
        try await changeClass(className, ClassSettingsChange(className: className, mergeRules: rules))
    }

    /// The REST API signed in as the harness's own user, signed up the first time.
    /// - Throws: When the sign-up fails.
    func writer() async throws -> RemoteAPI {
        if let session = writerSession.withLock({ $0 }) {
            return RemoteAPI(transport: direct, appId: process.appId, session: session)
        }
        let session = SessionTokenStore()
        let api = RemoteAPI(transport: direct, appId: process.appId, session: session)
        let signedUp = try await api.signUp(SignUpRequest(username: "writer", password: "secret-password"))
        session.set(signedUp.sessionToken)
        writerSession.withLock { $0 = session }
        return api
    }

    /// The REST API over the harness's own transport, signed in with `client`'s session.
    private func api(as client: RooftopClient) -> RemoteAPI {
        let session = SessionTokenStore()
        session.set(client.core.tokens.token)
        return RemoteAPI(transport: direct, appId: process.appId, session: session)
    }

    /// How many mutations the server applied (not answered again from its idempotency record):
    /// `rooftop_mutations_total{outcome="applied"}` of its metrics.
    /// - Throws: When the metrics cannot be read.
    func appliedMutationCount() async throws -> Int {
        let response = try await direct.send(TransportRequest(method: "GET", path: "/metrics"))
        guard response.status == 200 else { throw RemoteAPI.error(status: response.status, body: response.body) }
        // The counter's line appears with the first mutation applied.
        let text = String(decoding: response.body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("rooftop_mutations_total{outcome=\"applied\"}") }
        guard let line else { return 0 }
        guard let count = line.split(separator: " ").last.flatMap({ Double($0) }) else {
            throw RooftopError(.internal, "unreadable metric: \(line)")
        }
        return Int(count)
    }

    /// Refuses creating and changing objects of a class (its class permissions), or accepts them
    /// again (`refused` false).
    /// - Throws: When the admin call fails.
    func refuse(_ className: String, _ refused: Bool = true) async throws {
        let permissions = refused ? ClassPermissions(create: .nobody, update: .nobody) : ClassPermissions()
        try await changeClass(className, ClassSettingsChange(className: className, permissions: permissions))
    }

    /// ``API/putClassSettings`` with the admin key: the settings named in `body` change.
    private func changeClass(_ className: String, _ body: ClassSettingsChange) async throws {
        let endpoint = API.putClassSettings
        var request = TransportRequest(method: endpoint.operation.method.rawValue, path: endpoint.path(className))
        request.headers = [("X-Rooftop-Admin-Key", process.adminKey), ("X-Rooftop-Application-Id", process.appId)]
        request.body = try JSONEncoder().encode(body)
        let response = try await direct.send(request)
        guard response.status == 200 else {
            throw RemoteAPI.error(status: response.status, body: response.body)
        }
    }

    // MARK: The transport's side (``FaultTransport``)

    /// What to do with a request before it goes: fail it here, or send it.
    func admit(_ request: TransportRequest) -> RooftopError? {
        let path = String(request.path.prefix { $0 != "?" })
        return script.withLock { script in
            script.log.append("\(request.method) \(request.path)")
            if script.offline { return RooftopError(.noConnection, "offline (test transport)") }
            if let failure = script.failure { return failure }
            guard let index = script.failures.firstIndex(where: { path.hasPrefix($0.prefix) }) else { return nil }
            return script.failures.remove(at: index).error
        }
    }

    /// A pull's page size, rewritten when the test set one.
    func rewritten(_ request: TransportRequest, path: String) throws(RooftopError) -> TransportRequest {
        guard path == API.pull.operation.path, let size = script.withLock({ $0.pageSize }), let body = request.body else { return request }
        var request = request
        do {
            var pull = try JSONDecoder().decode(PullRequest.self, from: body)
            pull.limit = size
            request.body = try JSONEncoder().encode(pull)
        } catch {
            throw RooftopError(.internal, "the test transport could not rewrite a pull", cause: error)
        }
        return request
    }

    /// Whether a pull is interrupted (`network`) before reaching the server.
    func interruptsPull() -> Bool {
        script.withLock { script in
            guard script.pagesBeforeInterruption == 0 else { return false }
            script.pagesBeforeInterruption = nil
            return true
        }
    }

    /// Records a pull page's answer: its checkpoint, and one page fewer before an interruption.
    func recordPage(_ response: TransportResponse) {
        guard response.status == 200, let page = try? PullResponse.decodeDocument(response.body) else { return }
        script.withLock { script in
            script.checkpoints.append(page.checkpoint)
            if let pages = script.pagesBeforeInterruption, pages > 0 { script.pagesBeforeInterruption = pages - 1 }
        }
    }

    /// Whether requests hang until cancelled (``stall(_:)``).
    var stalls: Bool { script.withLock { $0.stalls } }

    /// Counts a stalled request that was cancelled.
    func countCancelled() { script.withLock { $0.cancelled += 1 } }

    /// Records a push or a pull on its way to the server.
    func record(_ request: TransportRequest, path: String) {
        guard let body = request.body else { return }
        if path == API.push.operation.path, let push = try? JSONDecoder().decode(PushRequest.self, from: body) {
            script.withLock { $0.pushes.append(push) }
        } else if path == API.pull.operation.path, let pull = try? JSONDecoder().decode(PullRequest.self, from: body) {
            script.withLock { $0.pulls.append(pull) }
        }
    }

    /// Whether a push's answer is to be lost (counted down).
    func losesPushAnswer() -> Bool {
        script.withLock { script in
            guard script.lostPushAnswers > 0 else { return false }
            script.lostPushAnswers -= 1
            return true
        }
    }
}

/// Starts a fresh real server, runs `body`, and stops its clients and the server whatever happens.
func withRealServer<T>(_ body: (RealSyncServer) async throws -> T) async throws -> T {
    try await scoped(try await RealSyncServer.start(), release: { await $0.stop() }, body)
}
