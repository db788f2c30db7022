import RooftopShared
import Synchronization

/// Continuous sync's channel over the server's live WebSocket: a ``LiveConnection`` whose
/// events become ``LiveSignal``s. The connection opens on the first subscription, reconnects by
/// itself with backoff, and follows the session: signing in, out or as someone else reconnects
/// with the new token.
final class LiveSocketChannel: LiveChannel {
    private let connection: LiveConnection
    private let signalsOut = Broadcaster<LiveSignal>()
    private struct State {
        var forwarder: Task<Void, Never>?
        var sessionFollower: Task<Void, Never>?
        var started = false
    }
    private let state = Mutex(State())

    /// A channel to the configuration's server, signed with the store's current token.
    /// - Throws: What ``LiveConnection/init(configuration:token:)`` throws (an invalid trust
    ///   setting).
    init(configuration: ClientConfiguration, tokens: SessionTokenStore) throws(RooftopError) {
        let connection = try LiveConnection(configuration: configuration, token: tokens.token)
        self.connection = connection
        let events = connection.events
        let forwarder = Task { [signalsOut] in
            for await event in events { signalsOut.publish(LiveSignal(event)) }
            signalsOut.finish()
        }
        let tokenChanges = tokens.changes.stream()
        let sessionFollower = Task {
            for await token in tokenChanges { await connection.updateSession(token: token) }
        }
        state.withLock {
            $0.forwarder = forwarder
            $0.sessionFollower = sessionFollower
        }
    }

    func signals() -> AsyncStream<LiveSignal> { signalsOut.stream() }

    func subscribe(to datastores: [DatastoreID]) async {
        let removed = await connection.subscriptions.filter { !datastores.contains($0) }
        await connection.unsubscribe(removed)
        await connection.subscribe(datastores)
        let start = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        if start { await connection.start() }
    }

    func close() async {
        let tasks = state.withLock { ($0.forwarder, $0.sessionFollower) }
        tasks.1?.cancel()
        await connection.close()
        // The connection's events end with close(); the forwarder then finishes the signals.
        await tasks.0?.value
        signalsOut.finish()
    }
}

extension LiveSignal {
    /// The signal a live connection's event stands for.
    init(_ event: LiveEvent) {
        switch event {
        case .connected: self = .connected
        case .disconnected: self = .disconnected
        case .subscribed(let datastores): self = .subscribed(datastores)
        case .changed(let datastore, let sequence): self = .changed(datastore, sequence: sequence)
        case .error(let error, _): self = .error(error)
        }
    }
}
