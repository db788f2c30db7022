import Foundation
import Logging
import RooftopShared
import Synchronization

/// What every part of a client shares: configuration, the local store, the remote API, the
/// session, the identity map. Objects hold it strongly; it holds no object strongly.
final class ClientCore: Sendable {
    let configuration: ClientConfiguration
    let store: LocalStore
    let transport: any HTTPTransport
    let api: RemoteAPI
    let tokens: SessionTokenStore
    let registry = ObjectRegistry()
    /// Announces changes of live objects that the store does not see: unsaved changes made or
    /// dropped, a new base read (observation re-reads objects and local queries on these).
    let edits = Broadcaster<StoreChange>()
    /// The signed-in account: session, scope of local rows, cached roles.
    let account: Account
    /// Signals that the offline queue has something new to send.
    let outboxSignal: AsyncStream<Void>.Continuation
    /// The offline queue's engine, the sync engine and what they share.
    let services: SyncServices

    /// A core over `transport`; `random` is the source of retry jitter (values in 0..<1), and
    /// `liveChannel` makes continuous sync's live connections (without one, continuous sync
    /// polls). The engines are made here, and start with ``startSync()``.
    /// - Throws: `cache` when the local datastore cannot be opened or its session read.
    init(
        configuration: ClientConfiguration, transport: any HTTPTransport,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        liveChannel: SyncServices.LiveChannelFactory? = nil
    ) throws(RooftopError) {
        self.configuration = configuration
        self.store = try LocalStore(configuration.storage)
        store.bulkLoading.withLock {
            $0.enabled = configuration.bulkInitialSync
            $0.thresholds = configuration.bulkLoadThresholds
        }
        self.transport = transport
        self.tokens = SessionTokenStore()
        self.api = RemoteAPI(transport: transport, appId: configuration.appId, session: tokens)
        let restored = try store.session()
        self.account = Account(store: store, restored: restored)
        tokens.set(restored?.token)
        let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.outboxSignal = signal
        var channel: (@Sendable () throws(RooftopError) -> any LiveChannel)?
        if let liveChannel {
            channel = { [tokens] () throws(RooftopError) -> any LiveChannel in try liveChannel(tokens) }
        }
        self.services = SyncServices(
            EngineDependencies(
                store: store, api: api, registry: registry, account: account, configuration: configuration,
                random: random),
            outboxSignals: signals, liveChannel: channel)
    }

    /// Shuts down a client dropped without ``RooftopClient/shutdown()``, in the background: its
    /// engines stop, its connections and its local datastore close (a `SyncEngine` the app still
    /// holds keeps them otherwise; its operations throw `closed`).
    deinit {
        outboxSignal.finish()
        let (services, transport, store) = (self.services, self.transport, self.store)
        Task {
            await services.shutdown()
            await transport.shutdown()
            store.close()
        }
    }

    /// The signed-in session, if any.
    var currentSession: StoredSession? { account.current }

    /// The scope of local rows: the signed-in user's ID, or `""` without an account.
    var scope: String { account.scope }

    /// The caller as local ACL checks see it: the user and their cached effective roles.
    var accessContext: AccessContext { identity.access }

    /// The scope of local rows and the caller as ACL checks see it, from one reading of the
    /// session (a user switching in between cannot pair one user's rows with another's roles).
    var identity: (scope: String, access: AccessContext) { account.identity }

    /// Starts a session: persists it, signs requests with it, and moves rows kept without an
    /// account into the user's scope.
    func begin(_ newSession: Session) throws(RooftopError) {
        let stored = StoredSession(user: newSession.user, token: newSession.sessionToken, expiresAt: newSession.expiresAt)
        let previousScope = scope
        try account.replace(with: stored)
        tokens.set(stored.token)
        if previousScope.isEmpty {
            try store.migrateScope(from: "", to: stored.user.objectId)
        } else if previousScope != stored.user.objectId {
            // Another user's live objects stay theirs (objects used without an account move
            // to the user with their rows, and keep their instances).
            registry.removeAll()
        }
        outboxSignal.yield()
    }

    /// Ends the session locally.
    func end() throws(RooftopError) {
        let previousScope = scope
        try account.replace(with: nil)
        tokens.set(nil)
        // The user's live objects are not handed out after signing out.
        if !previousScope.isEmpty { registry.removeAll() }
    }

    /// Replaces the cached user (new effective roles).
    func updateUser(_ user: UserInfo) throws(RooftopError) {
        try account.updateUser(user)
    }

    /// Reloads the signed-in user from the server and caches it (effective roles included).
    func refreshUser() async throws(RooftopError) -> UserInfo {
        let user = try await api.currentUser()
        try updateUser(user)
        return user
    }

    /// The live object for a stored or fetched state, its base replaced by `snapshot`.
    func materialize(_ snapshot: ObjectSnapshot) -> RooftopObject {
        let key = ObjectKey(snapshot)
        let object = registry.instance(for: key) { RooftopObject(key: key, base: snapshot, core: self) }
        object.replaceBase(snapshot)
        return object
    }

    /// The live instance for `key` as ``object(for:fetched:)`` gives it; when the local store
    /// cannot be read, an instance without a loaded state that the identity map does not keep
    /// (so the next call reads the store again), and the failure is logged with its reason.
    func objectOrUnloaded(for key: ObjectKey) -> RooftopObject {
        do {
            return try object(for: key)
        } catch {
            ClientCore.logger.error(
                "the local datastore could not be read; the object is handed out unloaded (fetch() loads it)",
                metadata: ["object": "\(key)", "error": "\(error)"])
            return RooftopObject(key: key, base: nil, core: self)
        }
    }

    /// Where the client logs what it cannot report through a thrown error.
    static let logger = Logger(label: "rooftop.client")

    /// The live object for a key, loaded from the local store when it is there, otherwise made
    /// from `fetched` (a state the server sent, e.g. as an include) when given.
    func object(for key: ObjectKey, fetched: ObjectSnapshot? = nil) throws(RooftopError) -> RooftopObject {
        if let existing = registry.existing(key) { return existing }
        guard let stored = try store.object(key, scope: scope) else {
            return registry.instance(for: key) { RooftopObject(key: key, base: fetched, core: self) }
        }
        return restoredInstance(stored)
    }

    /// A new live instance for a stored object, reading its stored local view. A view that
    /// differs from the server state while nothing is queued holds changes made before the
    /// object was pinned and never saved (as in Parse's local datastore: a pinned object keeps its unsaved changes):
    /// they become the instance's unsaved changes again, so that `save()` still sends them.
    /// An existing live instance is returned as it is.
    func restoredInstance(_ row: LocalObjectRow) -> RooftopObject {
        if let existing = registry.existing(row.key) { return existing }
        return madeInstance(row)
    }

    /// A new live instance for a stored object with none (``restoredInstance(_:)``); one made
    /// meanwhile by another task is returned instead.
    func madeInstance(_ row: LocalObjectRow) -> RooftopObject {
        // Worked out before taking the registry's lock: it may read the store.
        let made: RestoredState
        do {
            made = try store.restoredState(of: row, scope: scope)
        } catch {
            ClientCore.logger.error(
                "the offline queue could not be read; the object's edits are taken as queued, not unsaved",
                metadata: ["object": "\(row.key)", "error": "\(error)"])
            made = RestoredState(base: row.deleted ? nil : row.local, unsaved: [], acl: nil)
        }
        return registry.instance(for: row.key) {
            RooftopObject(key: row.key, base: made.base, unsaved: made.unsaved, unsavedACL: made.acl, core: self)
        }
    }
}
