import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import RooftopShared
import Synchronization

extension Benchmark {
    /// Phase `live notify`: `--subscribers` WebSockets to `/v1/live`, all subscribed to the shared
    /// datastore (as the run's users in turn), then `--live-writes` creates pushed one after the
    /// other; each sample is the time from sending a push to one subscriber receiving its
    /// `changed` notification (a subscriber's first message after the push). The next push is sent
    /// once every subscriber heard of the last one. The rate counts notifications delivered.
    func liveSubscribers() async throws {
        let count = settings.subscribers
        guard count > 0, settings.liveWrites > 0 else { return }
        let board = LiveBoard(subscribers: count)
        let target = try LiveTarget(endpoint: server.endpoint)
        let tokens = clients.map(\.token)
        let datastore = self.datastore
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                let subscribe = try LiveTarget.text(
                    .subscribe(datastores: [datastore], sessionToken: tokens[index % tokens.count]))
                group.addTask { try await target.subscriber(index, subscribe: subscribe, board: board) }
            }
            defer { group.cancelAll() }
            try await board.waitUntilSubscribed(timeout: .seconds(120))
            try await measure("live notify", unit: "ntf") { samples in
                for write in 0..<settings.liveWrites {
                    let object = dataset.objects[write % dataset.objects.count]
                    let mutation = Mutation(
                        datastore: datastore, className: Dataset.className, objectId: ObjectID.generate(),
                        change: .update(
                            object.fields.sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) },
                            acl: objectACL))
                    board.startWrite()
                    let pushed = try await clients[0].call(
                        API.push, body: PushRequest(mutations: [mutation]))
                    try require(pushed.value.results.allSatisfy(\.isApplied), "a live benchmark write was refused")
                    try await board.waitUntilHeard(timeout: .seconds(30))
                }
                await samples.add(board.latencies)
                return (count * settings.liveWrites, ["subscribers": Double(count)])
            }
            board.finish()
        }
    }
}

/// Where and how the live phase's sockets connect: the server's `/v1/live` over TLS, trusting
/// only the development CA, with the application ID.
struct LiveTarget: Sendable {
    let url: String
    let configuration: WebSocketClientConfiguration
    let tls: TLSConfiguration
    let logger = Logger(label: "rooftop-benchmark.live")

    init(endpoint: ServerEndpoint) throws {
        url = endpoint.baseURL.replacingOccurrences(of: "https://", with: "wss://") + API.live.operation.path
        var headers = HTTPFields()
        if let name = HTTPField.Name("X-Rooftop-Application-Id") { headers[name] = endpoint.appId }
        var configuration = WebSocketClientConfiguration(
            maxFrameSize: 1 << 16, additionalHeaders: headers, closeTimeout: .seconds(1))
        configuration.sniHostname = "localhost"
        self.configuration = configuration
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(endpoint.caCertificatePath))
        tls.shutdownTimeout = .milliseconds(100)
        self.tls = tls
    }

    /// A client message as the text frame that carries it.
    static func text(_ message: LiveClientMessage) throws -> String {
        String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
    }

    /// One subscriber: subscribes, then reports every message to the board until it is finished
    /// (or the task is cancelled).
    func subscriber(_ index: Int, subscribe: String, board: LiveBoard) async throws {
        _ = try await WebSocketClient.connect(
            url: url, configuration: configuration, tlsConfiguration: tls,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger
        ) { inbound, outbound, _ in
            try await outbound.write(.text(subscribe))
            for try await message in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = message else { continue }
                switch try JSONDecoder().decode(LiveServerMessage.self, from: Data(text.utf8)) {
                case .subscribed: board.subscribed()
                case .changed: board.heard(by: index)
                case .error(let error, _): throw BenchmarkError.request("live subscriber \(index) got an error: \(error)")
                }
                if board.isFinished { break }
            }
            try? await outbound.close(.normalClosure, reason: nil)
        }
    }
}

/// What the live phase's subscribers heard, shared with the writer: who subscribed, and for the
/// write in flight, when it was sent and who heard of it.
final class LiveBoard: Sendable {
    private struct State {
        var subscribed = 0
        var writeStart: ContinuousClock.Instant?
        var heard = Set<Int>()
        var latencies: [Duration] = []
        var finished = false
        var timedOut = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let subscribers: Int
    private let state = Mutex(State())

    init(subscribers: Int) {
        self.subscribers = subscribers
    }

    /// A subscription was confirmed.
    func subscribed() {
        resume { state in
            state.subscribed += 1
            return state.subscribed >= subscribers
        }
    }

    /// A push is about to be sent.
    func startWrite() {
        state.withLock { state in
            state.writeStart = .now
            state.heard = []
        }
    }

    /// Subscriber `index` received a notification: the first since the push counts.
    func heard(by index: Int) {
        let now = ContinuousClock.now
        resume { state in
            guard let start = state.writeStart, state.heard.insert(index).inserted else { return false }
            state.latencies.append(now - start)
            return state.heard.count >= subscribers
        }
    }

    /// Every latency measured.
    var latencies: [Duration] { state.withLock { $0.latencies } }

    /// Whether the phase is over (subscribers then close).
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Ends the phase.
    func finish() { state.withLock { $0.finished = true } }

    /// Waits until every subscription was confirmed.
    /// - Throws: When that does not happen within `timeout`.
    func waitUntilSubscribed(timeout: Duration) async throws {
        try await wait(timeout: timeout, "\(subscribers) subscriptions") { [subscribers] in $0.subscribed >= subscribers }
    }

    /// Waits until every subscriber heard of the last push.
    /// - Throws: When that does not happen within `timeout`.
    func waitUntilHeard(timeout: Duration) async throws {
        try await wait(timeout: timeout, "every subscriber's notification") { [subscribers] in $0.heard.count >= subscribers }
    }

    /// Applies `change`; wakes the waiter, if any, when it returns true (the waiter checks its
    /// own condition again).
    private func resume(_ change: (inout State) -> Bool) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard change(&state), let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Waits for `done`, woken by ``resume(_:)``, or fails after `timeout`.
    private func wait(timeout: Duration, _ what: String, until done: @escaping @Sendable (State) -> Bool) async throws {
        state.withLock { $0.timedOut = false }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
                state.timedOut = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        defer { timer.cancel() }
        while true {
            let (finished, timedOut) = state.withLock { (done($0), $0.timedOut) }
            if finished { return }
            if timedOut { throw BenchmarkError.request("the live phase timed out waiting for \(what)") }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready: Bool = state.withLock { state in
                    if done(state) || state.timedOut { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}
