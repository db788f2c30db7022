import Foundation
import HummingbirdWSClient
import NIOCore
import NIOPosix
import NIOWebSocket
import RooftopShared

extension LiveConnection {
    /// The reconnect loop: one socket at a time until ``close()``, with the retry policy's
    /// backoff between a failure and the next attempt.
    func run() async {
        var failures = 0
        while true {
            if case .closed = phase { break }
            phase = .connecting
            attemptOpened = false
            hangUp = nil
            let error = await openSocket()
            if case .closed = phase { break }
            let reason = hangUp
            hangUp = nil
            phase = .connecting
            // A socket the client ended on purpose is no failure.
            sink.yield(.disconnected(reason == nil ? error : nil))
            if attemptOpened { failures = 0 }
            if reason == .sessionChanged { continue }
            failures += 1
            await waitBeforeRetry(attempt: failures)
        }
    }

    /// Sleeps the backoff before retry number `attempt` on the injected clock; ``retryNow()``
    /// and ``close()`` cut it short by cancelling the timer.
    private func waitBeforeRetry(attempt: Int) async {
        let delay = retry.delay(beforeAttempt: attempt, random: random())
        let clock = self.clock
        let timer = Task<Void, Never> { try? await clock.sleep(for: delay) }
        phase = .waiting(timer)
        await timer.value
        if case .waiting = phase { phase = .connecting }
    }

    /// Opens one socket and serves it until it ends.
    ///
    /// Each attempt runs on an event loop group of its own, shut down when the attempt is over:
    /// the WebSocket client leaves the connection open when the server declines the upgrade
    /// (swift-websocket 1.6.2), and shutting the group down closes it; ``close()`` can also end
    /// an attempt stuck in a TCP connect or TLS handshake that way.
    /// - Returns: Why it ended or could not open (meaningless when the client hung up itself).
    private func openSocket() async -> RooftopError? {
        let (outgoing, sender) = AsyncStream.makeStream(of: String.self)
        let sink = self.sink
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        attemptGroup = group
        let result: RooftopError
        do {
            let closeFrame = try await WebSocketClient.connect(
                url: target.url, configuration: target.configuration, tlsConfiguration: target.tls,
                eventLoopGroup: group, logger: logger
            ) { inbound, outbound, _ in
                guard await self.socketOpened(sender) else { return }
                try await LiveConnection.pump(inbound: inbound, outbound: outbound, outgoing: outgoing, sink: sink)
            }
            var message = "the server closed the live connection"
            if let closeFrame {
                message += " (\(closeFrame.closeCode)\(closeFrame.reason.map { ": " + $0 } ?? ""))"
            }
            result = RooftopError(.network, message)
        } catch {
            result = LiveConnection.translate(error)
        }
        sender.finish()
        attemptGroup = nil
        // Fails only when close() shut the group down already.
        try? await group.shutdownGracefully()
        return result
    }

    /// Called by the socket's handler once the upgrade succeeded: records the open socket,
    /// announces it, and sends the subscriptions with the current token.
    /// - Returns: `false` when the connection was closed meanwhile (the handler then returns,
    ///   which closes the socket).
    private func socketOpened(_ sender: AsyncStream<String>.Continuation) -> Bool {
        guard case .connecting = phase else {
            sender.finish()
            return false
        }
        phase = .open(sender)
        attemptOpened = true
        sink.yield(.connected)
        // The first message of every socket: all subscriptions, with the current token.
        if !datastores.isEmpty {
            send(.subscribe(datastores: datastores, sessionToken: token))
        }
        return true
    }

    /// Moves messages both ways until the socket ends: queued client messages out (a finished
    /// queue sends a close frame), server messages in as events.
    private static func pump(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, outgoing: AsyncStream<String>,
        sink: AsyncStream<LiveEvent>.Continuation
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await text in outgoing { try await outbound.write(.text(text)) }
                // Cancelled: the server ended the socket, there is nobody to say goodbye to.
                guard !Task.isCancelled else { return }
                try? await outbound.close(.normalClosure, reason: nil)
            }
            for try await message in inbound.messages(maxSize: LiveSocketTarget.maxMessageBytes) {
                // The server sends only text; anything else is ignored rather than fatal.
                guard case .text(let text) = message else { continue }
                sink.yield(LiveEvent(serverText: text))
            }
            group.cancelAll()
        }
    }

    /// The Rooftop error for a failure of the WebSocket client: a refused upgrade is `auth`
    /// (the server refuses only a wrong application ID, since the token is not sent on the
    /// upgrade), other WebSocket protocol failures `network`, everything else as for HTTP
    /// (``AsyncHTTPTransport/translate(_:)``: `noConnection`, `timeout`, `tls`, `network`).
    static func translate(_ error: any Error) -> RooftopError {
        if let error = error as? WebSocketClientError {
            if error == .webSocketUpgradeFailed {
                return RooftopError(
                    .auth, "the server refused the live connection: check the application ID", cause: error)
            }
            return RooftopError(.network, "the live connection failed: \(error)", cause: error)
        }
        return AsyncHTTPTransport.translate(error)
    }
}
