import Foundation
@testable import Rooftop
import RooftopShared
import RooftopTestSupport
import Synchronization


/// Real ``RooftopClient`` instances for a test server: on a cache file or in memory, signed in
/// as a user made with the admin-side ``APIClient``, or pointed at a port nothing listens on
/// (the server "down") over the same cache file. Every client is shut down on every path.
///
/// ```swift
/// let file = ClientQueryFixture.cacheFile()
/// try await ClientQueryFixture.withClient(server, as: alice, storage: .file(path: file)) { client in
///     _ = try await client.query("Score").find(policy: .remoteAndStore)
/// }
/// try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { client in
///     _ = try await client.query("Score").find(policy: .localOnly)
/// }
/// ```
enum ClientQueryFixture {
    /// A path for a new client cache file (in a fresh temporary directory).
    static func cacheFile(_ prefix: String = "client-cache") -> String {
        TemporaryDirectory.make(prefix: prefix) + "/cache.sqlite"
    }

    /// A configuration for the server (its CA trusted), with `storage`, and short retry delays.
    /// - Parameter port: Another port to connect to (a closed one, for a server that is down).
    static func configuration(_ server: ServerProcess, storage: LocalStorage, port: Int? = nil) throws
        -> ClientConfiguration
    {
        var configuration = try ClientTransportFixture.configuration(server)
        configuration.storage = storage
        if let port {
            guard let url = URL(string: "https://127.0.0.1:\(port)") else { throw FixtureError("bad port \(port)") }
            configuration.serverURL = url
        }
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(1), jitter: 0)
        configuration.requestTimeout = .seconds(20)
        return configuration
    }

    /// Runs `body` with a client of the server, signed in as `user` when given (a client restored
    /// from a cache file stays signed in as whoever was), and shuts the client down afterwards.
    static func withClient<T>(
        _ server: ServerProcess, as user: TestUser? = nil, storage: LocalStorage = .inMemory, port: Int? = nil,
        _ body: (RooftopClient) async throws -> T
    ) async throws -> T {
        let client = try await RooftopClient(configuration: configuration(server, storage: storage, port: port))
        return try await using(client) { client in
            if let user, client.currentUser?.objectId != user.id {
                try await client.logIn(username: user.username, password: user.password)
            }
            return try await body(client)
        }
    }

    /// Runs `body` with `client`, and shuts the client down whatever happens.
    static func using<T>(_ client: RooftopClient, _ body: (RooftopClient) async throws -> T) async throws -> T {
        try await scoped(client, release: { await $0.shutdown() }, body)
    }

    /// Runs `body` with a client over `storage` whose server cannot be reached: it points at a
    /// local port that refuses connections (held for the duration, so no one else takes it).
    /// - Parameter hanging: A port that accepts connections and never answers (requests end
    ///   in `timeout` after `requestTimeout`), instead of one that refuses them.
    static func withOfflineClient<T>(
        _ server: ServerProcess, storage: LocalStorage, hanging: Bool = false, requestTimeout: Duration = .seconds(20),
        _ body: (RooftopClient) async throws -> T
    ) async throws -> T {
        let closed = try ClosedPort(silent: hanging)
        defer { closed.close() }
        var configuration = try configuration(server, storage: storage, port: closed.port)
        configuration.requestTimeout = requestTimeout
        return try await using(try await RooftopClient(configuration: configuration), body)
    }
}

extension ACL {
    /// Read (not write) access for each principal.
    static func readable(by principals: Principal...) -> ACL {
        var acl = ACL()
        for principal in principals { acl.setReadAccess(true, for: principal) }
        return acl
    }
}

extension FetchResult {
    /// The IDs of the objects, as a set.
    var idSet: Set<String> { Set(objectIds) }
}

/// A user with scores 10, 20, ... of a new class on a server, and a cache file for the user's
/// client: the setting of the fetch-policy and paging tests.
struct ClientScoreScene: Sendable {
    let server: ServerProcess
    let api: APIClient
    let user: TestUser
    let className: String
    let file: String
    /// The object ID of each score.
    private(set) var ids: [Int64: String] = [:]

    /// Signs up a user and creates `count` scores (10, 20, ...) as that user (readable by the
    /// user only: the class's default ACL).
    static func make(_ server: ServerProcess, _ api: APIClient, count: Int = 10) async throws -> ClientScoreScene {
        let user = try await api.newUser("scorer")
        var scene = ClientScoreScene(
            server: server, api: api, user: user, className: Unique.name("Score"), file: ClientQueryFixture.cacheFile())
        for index in 1...count { try await scene.add(Int64(index * 10)) }
        return scene
    }

    private init(server: ServerProcess, api: APIClient, user: TestUser, className: String, file: String) {
        self.server = server
        self.api = api
        self.user = user
        self.className = className
        self.file = file
    }

    /// Creates one more score on the server (through the admin-side client, as the user).
    @discardableResult
    mutating func add(_ score: Int64) async throws -> String {
        let object = try await api.create(className, fields: ["score": .int(score)], as: user)
        ids[score] = object.objectId
        return object.objectId
    }

    /// Deletes a score on the server (as the user).
    func delete(_ score: Int64) async throws {
        let id = try requireID(ids[score], score)
        let reply = try await api.send(API.deleteObject, APIClient.objectPath(.app, className, id), token: user.token)
        guard (200..<300).contains(reply.status) else { throw FixtureError("delete answered \(reply.status): \(reply.text)") }
    }

    /// The IDs of these scores, in this order.
    func ids(_ scores: Int64...) -> [String] { scores.compactMap { ids[$0] } }

    /// The three best scores.
    func top(_ client: RooftopClient) -> RooftopQuery {
        client.query(className).order(by: "score", descending: true).limit(3)
    }

    /// Runs `body` with the user's client on the scene's cache file, the server reachable.
    func online<T>(_ body: (RooftopClient) async throws -> T) async throws -> T {
        try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file), body)
    }

    /// Runs `body` with a client on the scene's cache file (signed in as the user, restored from
    /// the file) whose server cannot be reached.
    func offline<T>(_ body: (RooftopClient) async throws -> T) async throws -> T {
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { client in
            guard client.currentUser?.objectId == user.id else {
                throw FixtureError("the offline client did not restore the user's session")
            }
            return try await body(client)
        }
    }
}

/// The ID, or a fixture error naming the score.
private func requireID(_ id: String?, _ score: Int64) throws -> String {
    guard let id else { throw FixtureError("no object with score \(score)") }
    return id
}
