import Foundation
import Metrics
import RooftopShared

/// Tells live subscribers that a datastore changed, ACL-filtered: a subscriber hears of a commit
/// only when it could read the object before or after the change (so removals are announced too,
/// but nobody learns of objects they never could read).
///
/// Each subscriber receives messages through an `AsyncStream`, buffered up to a few messages: a
/// slow subscriber only misses intermediate notifications, which is harmless because each one
/// just says "pull again".
actor LiveHub {
    /// The session a subscriber signed in with: its token's hash and when it expires.
    struct SessionMark: Sendable, Hashable {
        /// The hex SHA-256 of the session token.
        var hash: String
        /// When the session stops being valid.
        var expiresAt: Timestamp
    }

    /// A connected subscriber's state.
    private struct Subscriber {
        let context: AccessContext
        let principals: Set<String>
        var datastores: [Int64: DatastoreID]
        let continuation: AsyncStream<LiveServerMessage>.Continuation
        var session: SessionMark?
        /// The subscriber's own private datastores that do not exist yet: subscribing does not
        /// create them; the first change committed in one (which creates it) subscribes it.
        var pending: Set<DatastoreID> = []

        /// Subscriptions held, pending ones included.
        var subscriptionCount: Int { datastores.count + pending.count }
    }

    /// The most datastores one connection may be subscribed to.
    static let maxSubscriptions = 100

    private let clock: ServerClock

    /// A hub reading the time (for session expiry) from `clock`.
    init(clock: ServerClock = .system) {
        self.clock = clock
    }

    private var subscribers: [UUID: Subscriber] = [:] {
        didSet { Gauge(label: "rooftop_live_connections").record(subscribers.count) }
    }

    /// Registers a connection; messages for it arrive on the returned stream until
    /// ``disconnect(_:)``.
    func connect(id: UUID, context: AccessContext, session: SessionMark?) -> AsyncStream<LiveServerMessage> {
        let (stream, continuation) = AsyncStream<LiveServerMessage>.makeStream(bufferingPolicy: .bufferingNewest(16))
        subscribers[id] = Subscriber(
            context: context, principals: Set(context.principals.map(\.description)), datastores: [:],
            continuation: continuation, session: session)
        return stream
    }

    /// Replaces the caller's identity (a new session token in a later `subscribe`, or new roles).
    func updateContext(id: UUID, context: AccessContext, session: SessionMark?? = .none) {
        guard let subscriber = subscribers[id] else { return }
        // Pending private datastores are the user's own: another user does not inherit them.
        subscribers[id] = Subscriber(
            context: context, principals: Set(context.principals.map(\.description)),
            datastores: subscriber.datastores, continuation: subscriber.continuation,
            session: session ?? subscriber.session,
            pending: context.userId == subscriber.context.userId ? subscriber.pending : [])
    }

    /// The connection's current identity, or `nil` when it is gone; an expired session makes it
    /// anonymous first.
    func context(id: UUID) -> AccessContext? {
        guard let subscriber = subscribers[id] else { return nil }
        if let session = subscriber.session, session.expiresAt <= clock.now() {
            endSession(id, subscriber, message: "the session expired; log in again")
            return subscribers[id]?.context
        }
        return subscriber.context
    }

    /// Ends the subscriptions of connections signed in with a revoked session (log-out): each is
    /// told with an `auth` error and continues as anonymous, subscribed to nothing.
    func revokeSession(hash: String) {
        for (id, subscriber) in subscribers where subscriber.session?.hash == hash {
            endSession(id, subscriber, message: "the session was revoked; log in again")
        }
    }

    private func endSession(_ id: UUID, _ subscriber: Subscriber, message: String) {
        subscribers[id] = Subscriber(
            context: .anonymous, principals: Set(AccessContext.anonymous.principals.map(\.description)),
            datastores: [:], continuation: subscriber.continuation, session: nil)
        subscriber.continuation.yield(.error(RooftopError(.auth, message), datastore: nil))
    }

    /// Recomputes every signed-in subscriber's effective roles after a role change.
    func refreshRoles(_ graph: RoleGraph) {
        for (id, subscriber) in subscribers {
            guard let userId = subscriber.context.userId, !subscriber.context.isAdmin else { continue }
            updateContext(id: id, context: AccessContext(userId: userId, roleGraph: graph))
        }
    }

    /// How many more datastores a connection may subscribe to.
    func remainingSubscriptions(id: UUID) -> Int {
        subscribers[id].map { LiveHub.maxSubscriptions - $0.subscriptionCount } ?? 0
    }

    /// Adds datastores to a connection's subscriptions: existing ones by key, and the caller's
    /// own private datastores that do not exist yet as pending.
    func subscribe(id: UUID, datastores: [(key: Int64, id: DatastoreID)], pending: [DatastoreID] = []) {
        guard var subscriber = subscribers[id] else { return }
        for datastore in datastores {
            subscriber.datastores[datastore.key] = datastore.id
            subscriber.pending.remove(datastore.id)
        }
        subscriber.pending.formUnion(pending)
        subscribers[id] = subscriber
    }

    /// Removes datastores from a connection's subscriptions.
    func unsubscribe(id: UUID, datastores: [DatastoreID]) {
        let removed = Set(datastores)
        // Read, change, write back: assigning through `subscribers[id]?` while reading
        // `subscribers` on the right-hand side overlaps two accesses (a fatal exclusivity error).
        guard var subscriber = subscribers[id] else { return }
        subscriber.datastores = subscriber.datastores.filter { !removed.contains($0.value) }
        subscriber.pending.subtract(removed)
        subscribers[id] = subscriber
    }

    /// Sends a message to one connection.
    func send(id: UUID, _ message: LiveServerMessage) {
        subscribers[id]?.continuation.yield(message)
    }

    /// Forgets a connection and ends its stream.
    func disconnect(_ id: UUID) {
        subscribers.removeValue(forKey: id)?.continuation.finish()
    }

    /// Ends every stream (server shutdown).
    func disconnectAll() {
        for subscriber in subscribers.values { subscriber.continuation.finish() }
        subscribers.removeAll()
    }

    /// Announces a committed change to the subscribers allowed to know of it: the same three
    /// layers a pull applies (the datastore role now, the class's `find` permission, the object's
    /// readers before or after the change). A subscriber whose role on the datastore is gone is
    /// told so with a `notFound` error about it and unsubscribed from it.
    /// - Parameters:
    ///   - datastore: The datastore as of the change (its sharing roles decide who still has a role).
    ///   - permissions: The permissions of the changed object's class; `nil` when unknown (a
    ///     resync after messages from other server processes may have been missed).
    ///   - readers: Principals that could read the object before or after the change; `nil` when
    ///     unknown (too many to send between server processes): every subscriber then hears of it,
    ///     which tells nothing but "pull again".
    func publish(
        datastore record: DatastoreRecord, sequence: Int64, permissions: ClassPermissions?, readers: Set<String>?
    ) {
        let now = clock.now()
        for (id, var subscriber) in subscribers {
            if record.id.kind == .private, record.ownerId != nil, record.ownerId == subscriber.context.userId,
                subscriber.pending.remove(record.id) != nil
            {
                // The first change of a private datastore a subscriber was waiting for.
                subscriber.datastores[record.key] = record.id
                subscribers[id] = subscriber
            }
            guard let datastore = subscriber.datastores[record.key] else { continue }
            if let session = subscriber.session, session.expiresAt <= now {
                endSession(id, subscriber, message: "the session expired; log in again")
                continue
            }
            guard record.role(for: subscriber.context).allows(.find) else {
                subscribers[id]?.datastores[record.key] = nil
                subscriber.continuation.yield(
                    .error(RooftopError(.notFound, "no datastore \(datastore)"), datastore: datastore))
                continue
            }
            if let permissions, !permissions.allows(.find, for: subscriber.context) { continue }
            if subscriber.context.isAdmin || readers.map({ !subscriber.principals.isDisjoint(with: $0) }) ?? true {
                subscriber.continuation.yield(.changed(datastore: datastore, sequence: sequence))
            }
        }
    }

    /// Whether a change in the datastore may concern a subscriber: one is subscribed to it, or
    /// waits for a private datastore to be created.
    func wants(datastoreKey: Int64) -> Bool {
        subscribers.values.contains { $0.datastores[datastoreKey] != nil || !$0.pending.isEmpty }
    }

    /// The datastores some subscriber is subscribed to.
    func subscribedDatastoreKeys() -> Set<Int64> {
        Set(subscribers.values.flatMap(\.datastores.keys))
    }

    /// How many connections are open (for metrics).
    var connectionCount: Int { subscribers.count }
}
