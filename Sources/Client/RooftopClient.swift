import Foundation
import RooftopShared

/// A Rooftop client: the app's connection to a server and its local datastore.
///
/// Several clients live independently in one process (different users, different cache files).
/// Every method is safe to call from any task. Every error the client's methods throw is a
/// `RooftopError` (declared untyped, so that `catch let error as RooftopError` works the same in
/// functions and closures).
///
/// ```swift
/// var configuration = ClientConfiguration(serverURL: URL(string: "https://127.0.0.1:8443")!)
/// configuration.trust = .certificateAuthority(pem: caPEM)
/// configuration.storage = .file(path: "/path/to/cache.sqlite")
/// let client = try await RooftopClient(configuration: configuration)
/// try await client.logIn(username: "alice", password: "correct horse")
/// let score = client.object("GameScore")
/// score["score"] = 1337
/// try await score.saveEventually()
/// ```
public final class RooftopClient: Sendable {
    let core: ClientCore

    /// Opens the local datastore (restoring the signed-in user, if any) and prepares the
    /// connection to the server. Nothing is sent until something needs the server.
    /// - Throws: `cache` when the local datastore cannot be opened; `illegalArgument` for an
    ///   invalid trusted certificate.
    public init(configuration: ClientConfiguration) async throws {
        let transport = try AsyncHTTPTransport(
            baseURL: configuration.serverURL, trust: configuration.trust, timeout: configuration.requestTimeout)
        core = try ClientCore(
            configuration: configuration, transport: transport,
            liveChannel: { tokens throws(RooftopError) in try LiveSocketChannel(configuration: configuration, tokens: tokens) })
        core.startSync()
    }

    /// A client over a given transport (tests), with a fixed source of retry jitter if given.
    init(
        configuration: ClientConfiguration, transport: any HTTPTransport, random: (@Sendable () -> Double)? = nil
    ) throws(RooftopError) {
        core = try ClientCore(
            configuration: configuration, transport: transport, random: random ?? { Double.random(in: 0..<1) })
        core.startSync()
    }

    /// The configuration in effect.
    public var configuration: ClientConfiguration { core.configuration }

    /// Stops the client: closes the network connections and the local datastore.
    public func shutdown() async {
        await core.services.shutdown()
        core.outboxSignal.finish()
        await core.transport.shutdown()
        core.store.close()
    }

    // MARK: Accounts

    /// The signed-in user (with effective roles as of the last sign-in or refresh), restored
    /// across restarts; `nil` without an account.
    public var currentUser: UserInfo? { core.currentSession?.user }

    /// Creates an account and signs in. Objects kept locally without an account move to it. The
    /// server stores the name in NFC; `UserInfo.username` is the name as stored.
    /// - Throws: `exists` for a taken user name, or one that differs from a taken name only in case,
    ///   Unicode form, width or invisible characters (`SignUpRequest.usernameKey(_:)`);
    ///   `illegalArgument` for a weak password or an unusable name; network errors.
    @discardableResult
    public func signUp(username: String, password: String, email: String? = nil) async throws -> UserInfo {
        let session = try await core.api.signUp(SignUpRequest(username: username, password: password, email: email))
        try core.begin(session)
        return session.user
    }

    /// Signs in. Objects kept locally without an account move to the user. The account is found
    /// under any name with the same key as its own (`ALICE` signs in to `alice`).
    /// - Throws: `auth` for wrong credentials, `retryLater` when throttled, network errors.
    @discardableResult
    public func logIn(username: String, password: String) async throws -> UserInfo {
        let session = try await core.api.logIn(LogInRequest(username: username, password: password))
        try core.begin(session)
        return session.user
    }

    /// Signs out: the session is revoked on the server (when reachable) and forgotten locally.
    /// The user's local data stays, for the next sign-in.
    public func logOut() async throws {
        do {
            try await core.api.logOut()
        } catch {
            // Offline, or already revoked: forgetting the session locally is what matters.
            guard [.noConnection, .timeout, .network, .auth].contains(error.code) else { throw error }
        }
        try core.end()
    }

    /// Reloads the signed-in user from the server (effective roles included, for local ACL checks).
    @discardableResult
    public func refreshCurrentUser() async throws -> UserInfo {
        try await core.refreshUser()
    }

    // MARK: Objects

    /// The live object with this ID — loaded from the local datastore when it is there — or a new
    /// one with a fresh ID.
    /// - Parameters:
    ///   - className: The class.
    ///   - objectId: An existing object's ID; `nil` makes a new object.
    ///   - datastore: The datastore (default: the app datastore `:app`).
    public func object(_ className: String, id objectId: String? = nil, in datastore: DatastoreID = .app)
        -> RooftopObject
    {
        let key = ObjectKey(datastore: datastore, className: className, objectId: objectId ?? ObjectID.generate())
        return core.objectOrUnloaded(for: key)
    }

    /// Pins objects under a label (recursively through their pointers known locally).
    public func pinAll(_ objects: [RooftopObject], label: String? = nil) async throws {
        try core.pin(objects, label: label ?? LocalStore.defaultLabel)
    }

    /// Removes a label from objects.
    public func unpinAll(_ objects: [RooftopObject], label: String? = nil) async throws {
        try core.unpin(objects, label: label ?? LocalStore.defaultLabel)
    }

    /// Removes a label from every object that has it (Parse's unpinAllObjectsWithName).
    public func unpinAll(label: String) async throws {
        try core.store.write(scope: core.scope) { transaction in try transaction.unpinAll(label: label) }
    }

    /// The server's version and limits.
    public func serverInfo() async throws -> ServerInfo {
        try await core.api.info()
    }
}
