import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOSSL
import RooftopShared
import Synchronization
import RooftopTestSupport

/// A WebSocket connection to a test server's `/v1/live`, over TLS trusting only the server's
/// development CA. Received text messages queue up; ``next(within:)`` takes them in order,
/// waiting on the queue up to a deadline (never a fixed sleep).
///
/// ```swift
/// let live = try await LiveClient.connect(to: server)
/// try await live.send(.subscribe(datastores: [.app], sessionToken: token))
/// let first = try await live.next()
/// ```
final class LiveClient: Sendable {
    private let inbox: Inbox
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>

    private init(inbox: Inbox, outgoing: AsyncStream<String>.Continuation, task: Task<Void, Never>) {
        self.inbox = inbox
        self.outgoing = outgoing
        self.task = task
    }

    /// Connects and waits (up to `deadline`) until the upgrade succeeded.
    /// - Parameters:
    ///   - appId: The application ID header to send (default the server's).
    ///   - sessionToken: A session token header to send on the upgrade request.
    ///   - bearer: A session token to send as `Authorization: Bearer` on the upgrade request.
    ///   - adminKey: An admin key header to send on the upgrade request.
    static func connect(
        to server: ServerProcess, appId: String? = nil, sessionToken: String? = nil, bearer: String? = nil,
        adminKey: String? = nil, deadline: Duration = TestWait.patience
    ) async throws -> LiveClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(server.caCertificatePath))
        // After the WebSocket close handshake the client's TLS layer waits for the server's
        // close_notify; about half the time it waited its whole default 5 s for it. The
        // connection is finished by then, so don't let every test pay for that.
        tls.shutdownTimeout = .milliseconds(100)
        var headers = HTTPFields()
        if let name = HTTPField.Name("X-Rooftop-Application-Id") { headers[name] = appId ?? server.appId }
        if let sessionToken, let name = HTTPField.Name("X-Rooftop-Session-Token") { headers[name] = sessionToken }
        if let adminKey, let name = HTTPField.Name("X-Rooftop-Admin-Key") { headers[name] = adminKey }
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        // The server listens on 127.0.0.1; its certificate also names localhost, which SNI needs
        // (an IP address cannot be sent as an SNI host name).
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: 1 << 20, additionalHeaders: headers, sniHostname: "localhost")
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let inbox = Inbox()
        let url = "wss://127.0.0.1:\(server.port)/v1/live"
        var logger = Logger(label: "live-test-client")
        logger.logLevel = .critical
        let task = Task { [logger] in
            do {
                try await WebSocketClient.connect(
                    url: url, configuration: configuration, tlsConfiguration: tls, logger: logger
                ) { inbound, outbound, _ in
                    inbox.update { $0.connected = true }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await text in stream { try await outbound.write(.text(text)) }
                            try await outbound.close(.normalClosure, reason: nil)
                        }
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            if case .text(let text) = message { inbox.update { $0.received.append(text) } }
                        }
                        group.cancelAll()
                    }
                }
                inbox.update { $0.finished = true }
            } catch {
                inbox.update {
                    $0.failure = "\(error)"
                    $0.finished = true
                }
            }
        }
        let client = LiveClient(inbox: inbox, outgoing: continuation, task: task)
        do {
            try await inbox.wait(deadline: deadline) { state in
                if state.connected { return true }
                if state.finished {
                    throw LiveClientError.connectFailed(state.failure ?? "the connection ended before upgrading")
                }
                return false
            }
        } catch {
            await client.close()
            throw error
        }
        return client
    }

    /// Sends a client message.
    func send(_ message: LiveClientMessage) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        send(text: (try? encoder.encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    /// Sends raw text.
    func send(text: String) {
        outgoing.yield(text)
    }

    /// The next message received, as text, waiting up to `deadline`.
    /// - Throws: ``TestSupportError`` on timeout, or ``LiveClientError/closed``.
    func nextText(within deadline: Duration = .seconds(30)) async throws -> String {
        var taken: String?
        try await inbox.wait(deadline: deadline) { state in
            if !state.received.isEmpty {
                taken = state.received.removeFirst()
                return true
            }
            if state.finished { throw LiveClientError.closed }
            return false
        }
        guard let taken else { throw LiveClientError.closed }
        return taken
    }

    /// The next message received, decoded, waiting up to `deadline`.
    func next(within deadline: Duration = .seconds(30)) async throws -> LiveServerMessage {
        let text = try await nextText(within: deadline)
        do {
            return try JSONDecoder().decode(LiveServerMessage.self, from: Data(text.utf8))
        } catch {
            throw LiveClientError.undecodable(text)
        }
    }

    /// Messages received and not yet taken.
    var pending: [String] { inbox.read { $0.received } }

    /// Whether the connection is still open.
    var isOpen: Bool { inbox.read { !$0.finished } }

    /// Closes the connection and waits for the client to finish.
    func close() async {
        outgoing.finish()
        // The close handshake normally ends the task; the cancel covers a server that never answers.
        let task = self.task
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(10))
            task.cancel()
        }
        await task.value
        watchdog.cancel()
    }
}

extension LiveClient {
    /// Subscribes as `user` and waits for the confirmation.
    /// - Throws: When the next message is anything but `subscribed` to exactly `datastores`.
    func subscribe(to datastores: [DatastoreID], as user: TestUser) async throws {
        send(.subscribe(datastores: datastores, sessionToken: user.token))
        let reply = try await next()
        guard reply == .subscribed(datastores: datastores) else {
            throw FixtureError("expected subscribed to \(datastores), got \(reply)")
        }
    }

    /// The sequence numbers of the next `count` messages, which must all be `changed`.
    func changedSequences(count: Int) async throws -> [Int64] {
        var sequences: [Int64] = []
        while sequences.count < count {
            let message = try await next()
            guard case .changed(_, let sequence) = message else {
                throw FixtureError("expected a changed message, got \(message)")
            }
            sequences.append(sequence)
        }
        return sequences
    }
}

/// What a live connection received so far, shared between its task and the test.
private final class Inbox: Sendable {
    struct State {
        var received: [String] = []
        var connected = false
        var finished = false
        var failure: String?
    }

    private let state = Mutex(State())

    func update(_ change: (inout State) -> Void) {
        state.withLock { change(&$0) }
    }

    func read<T>(_ body: (State) -> T) -> T {
        state.withLock { body($0) }
    }

    /// Polls `condition` (under the lock) until it returns `true` or the deadline passes.
    func wait(deadline: Duration, _ condition: (inout State) throws -> Bool) async throws {
        try await TestWait.until(within: deadline, "a live message") { try state.withLock { try condition(&$0) } }
    }
}

/// Why a live connection failed.
enum LiveClientError: Error, CustomStringConvertible {
    case connectFailed(String)
    case closed
    case undecodable(String)

    var description: String {
        switch self {
        case .connectFailed(let reason): "live connection failed: \(reason)"
        case .closed: "the live connection closed"
        case .undecodable(let text): "undecodable live message: \(text)"
        }
    }
}

/// Runs `body` with a live connection, closed whatever happens.
func withLiveClient<T>(
    _ server: ServerProcess, appId: String? = nil, sessionToken: String? = nil, bearer: String? = nil,
    _ body: (LiveClient) async throws -> T
) async throws -> T {
    let client = try await LiveClient.connect(to: server, appId: appId, sessionToken: sessionToken, bearer: bearer)
    return try await scoped(client, release: { await $0.close() }, body)
}
