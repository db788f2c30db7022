import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
import RooftopShared

/// Keeps one WebSocket to the server's `/v1/live` open and reports what happens on it as
/// ``LiveEvent``s: connection state, confirmed subscriptions, and `changed` notifications that
/// tell the sync engine to pull.
///
/// The connection opens on ``start()`` and is kept open until ``close()``: when it drops, or an
/// attempt fails, it is tried again after the ``RetryPolicy``'s backoff, timed on the injected
/// clock (the attempt counter resets once a connection was open). Subscriptions can change at any
/// time and are sent again after every reconnect. The session token travels in the `subscribe`
/// messages rather than on the upgrade request, so a bad token is reported precisely as an
/// `.error(auth, nil)` instead of a refused upgrade that would look like any other failure.
///
/// ```swift
/// let live = try LiveConnection(configuration: configuration, token: session.token)
/// await live.subscribe([.default])
/// await live.start()
/// for await event in live.events {
///     if case .changed(let datastore, _) = event { await sync.pull(datastore) }
/// }
/// ```
actor LiveConnection {
    /// Everything that happens on the connection, in order; finished by ``close()``. Consume it:
    /// the buffer is unbounded.
    nonisolated let events: AsyncStream<LiveEvent>

    /// Feeds ``events``.
    nonisolated let sink: AsyncStream<LiveEvent>.Continuation
    /// Where to connect and what to trust.
    let target: LiveSocketTarget
    /// The backoff between attempts.
    let retry: RetryPolicy
    /// Times the backoff.
    let clock: any Clock<Duration>
    /// Picks each delay's jitter, in 0..<1 (see ``RetryPolicy/delay(beforeAttempt:random:)``).
    let random: @Sendable () -> Double
    /// For the WebSocket client's diagnostics.
    let logger: Logger

    /// The datastores the caller wants notifications for, in the order first asked for.
    var datastores: [DatastoreID] = []
    /// The session token sent with `subscribe` messages.
    var token: String?
    /// Where the reconnect loop is.
    var phase: Phase = .idle
    /// Whether the socket of the current attempt reached the open state.
    var attemptOpened = false
    /// Set when the client itself ends the current socket, and why.
    var hangUp: HangUp?
    /// The reconnect loop's task, from ``start()`` until ``close()``.
    var loop: Task<Void, Never>?
    /// The event loop group of the current connection attempt (see `openSocket()`).
    var attemptGroup: MultiThreadedEventLoopGroup?

    /// Where the reconnect loop is.
    enum Phase {
        /// ``start()`` was not called yet.
        case idle
        /// Opening a socket (TCP, TLS, WebSocket upgrade).
        case connecting
        /// The socket is open; messages for the server go into the continuation.
        case open(AsyncStream<String>.Continuation)
        /// Waiting out the backoff before the next attempt; cancel the task to retry at once.
        case waiting(Task<Void, Never>)
        /// ``close()`` was called.
        case closed
    }

    /// Why the client ended a socket itself.
    enum HangUp {
        /// ``close()``.
        case closing
        /// The session changed: reconnect at once with the new identity.
        case sessionChanged
    }

    /// A connection that is not started yet.
    /// - Parameters:
    ///   - target: Where to connect and what to trust.
    ///   - token: The session token to subscribe with (`nil` when signed out).
    ///   - retry: The backoff between attempts.
    ///   - clock: Times the backoff (inject a test clock).
    ///   - random: Picks each delay's jitter, in 0..<1 (default: uniformly at random).
    ///   - logger: For connection-level diagnostics.
    init(
        target: LiveSocketTarget, token: String?, retry: RetryPolicy, clock: any Clock<Duration>,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger = Logger(label: "rooftop.live")
    ) {
        (events, sink) = AsyncStream.makeStream(of: LiveEvent.self, bufferingPolicy: .unbounded)
        self.target = target
        self.token = token
        self.retry = retry
        self.clock = clock
        self.random = random
        self.logger = logger
    }

    /// A connection to the configuration's server, with its trust, retry policy and clock.
    /// - Throws: What ``LiveSocketTarget/init(serverURL:appId:trust:)`` throws.
    init(configuration: ClientConfiguration, token: String?) throws(RooftopError) {
        self.init(
            target: try LiveSocketTarget(
                serverURL: configuration.serverURL, appId: configuration.appId, trust: configuration.trust),
            token: token, retry: configuration.retry, clock: configuration.clock)
    }

    /// Starts connecting (once; later calls do nothing, as do calls after ``close()``).
    func start() {
        guard case .idle = phase else { return }
        phase = .connecting
        loop = Task { await self.run() }
    }

    /// Adds datastores to the subscriptions; sent at once when connected, and after every
    /// reconnect. Datastores already subscribed are ignored.
    func subscribe(_ ids: [DatastoreID]) {
        var added: [DatastoreID] = []
        for id in ids where !datastores.contains(id) && !added.contains(id) { added.append(id) }
        guard !added.isEmpty else { return }
        datastores += added
        send(.subscribe(datastores: added, sessionToken: token))
    }

    /// Removes datastores from the subscriptions (told to the server at once when connected).
    func unsubscribe(_ ids: [DatastoreID]) {
        let removed = datastores.filter { ids.contains($0) }
        guard !removed.isEmpty else { return }
        datastores.removeAll { removed.contains($0) }
        send(.unsubscribe(datastores: removed))
    }

    /// The datastores currently asked for.
    var subscriptions: [DatastoreID] { datastores }

    /// Replaces the session token (`nil` after log-out). An open socket is closed and opened
    /// again at once, so that nothing of the previous identity survives on the server; the
    /// subscriptions are then sent with the new token.
    func updateSession(token: String?) {
        guard token != self.token else { return }
        self.token = token
        if case .open(let outgoing) = phase {
            hangUp = .sessionChanged
            outgoing.finish()
        }
    }

    /// Ends a backoff wait and tries to connect at once (e.g. when the network came back).
    func retryNow() {
        if case .waiting(let timer) = phase { timer.cancel() }
    }

    /// Closes the connection: ``events`` ends at once (with `.disconnected(nil)` when a socket
    /// was open), an open socket gets a WebSocket close, a backoff wait ends, and the reconnect
    /// loop stops. Returns once the loop has ended: at once when no socket is open, after the
    /// close handshake when one is, and after about a second when the server does not answer
    /// it or an attempt hangs in a TCP connect or TLS handshake (its channels are then closed).
    func close() async {
        let previous = phase
        if case .closed = previous { return }
        phase = .closed
        switch previous {
        case .open(let outgoing):
            hangUp = .closing
            outgoing.finish()
            sink.yield(.disconnected(nil))
        case .waiting(let timer):
            timer.cancel()
        case .idle, .connecting, .closed:
            break
        }
        // Nothing is reported after close() began, not even messages still in flight.
        sink.finish()
        if let loop {
            // First a polite close handshake; a socket or an attempt that does not end is then
            // cut off by shutting its event loop group down, which closes its channels.
            if !(await LiveConnection.wait(for: loop, upTo: .seconds(1))) {
                loop.cancel()
                try? await attemptGroup?.shutdownGracefully()
                _ = await LiveConnection.wait(for: loop, upTo: .seconds(1))
            }
        }
        self.loop = nil
    }

    /// Queues a message for the server when a socket is open (otherwise the next connection's
    /// initial subscribe covers it).
    func send(_ message: LiveClientMessage) {
        guard case .open(let outgoing) = phase else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(message) else { return }
        outgoing.yield(String(decoding: data, as: UTF8.self))
    }

    /// Waits until `loop` ends or `limit` passes (real time: this bounds a shutdown, it is not
    /// part of the retry schedule). Returns whether the loop ended.
    private static func wait(for loop: Task<Void, Never>, upTo limit: Duration) async -> Bool {
        let gate = FirstAnswer()
        return await withCheckedContinuation { continuation in
            gate.register(continuation)
            // `Task.value` cannot be cancelled, hence the race between two tasks; the timer is
            // cancelled as soon as the loop ends, so nothing outlives the wait by long.
            let timer = Task {
                try? await Task.sleep(for: limit)
                gate.answer(false)
            }
            Task {
                await loop.value
                timer.cancel()
                gate.answer(true)
            }
        }
    }
}

/// Resumes a continuation with the first answer given; later answers are ignored.
private final class FirstAnswer: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Bool, Never>?, answered: Bool)>((nil, false))

    /// Registers the continuation to resume.
    func register(_ continuation: CheckedContinuation<Bool, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Resumes the continuation with `value`, if nothing answered before.
    func answer(_ value: Bool) {
        let continuation: CheckedContinuation<Bool, Never>? = state.withLock { state in
            guard !state.answered else { return nil }
            state.answered = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: value)
    }
}
