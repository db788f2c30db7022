import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization

/// The real HTTPS transport with test controls around it: pulls ask for pages of at most
/// `pullPageSize` objects (the client never names a page size, the server's default is 500),
/// pushes can fail as if the connection were down (``blocksPushes``) or wait in flight until
/// released (``holdPushes()``), and requests are counted by path.
final class SyncTestTransport: HTTPTransport {
    private struct State {
        var blockPushes = false
        var holdPushes = false
        var holdPushAnswers = false
        var losePushAnswers = false
        var held: [CheckedContinuation<Void, Never>] = []
        var counts: [String: Int] = [:]
    }

    private let inner: AsyncHTTPTransport
    private let pullPageSize: Int?
    private let state = Mutex(State())

    init(configuration: ClientConfiguration, pullPageSize: Int? = nil) throws {
        inner = try AsyncHTTPTransport(
            baseURL: configuration.serverURL, trust: configuration.trust, timeout: configuration.requestTimeout)
        self.pullPageSize = pullPageSize
    }

    /// Whether pushes fail with `noConnection` without reaching the server.
    var blocksPushes: Bool {
        get { state.withLock { $0.blockPushes } }
        set { state.withLock { $0.blockPushes = newValue } }
    }

    /// Whether pushes reach the server but their answers are lost, as when the connection drops
    /// after the server committed: the client gets `noConnection`.
    var losesPushAnswers: Bool {
        get { state.withLock { $0.losePushAnswers } }
        set { state.withLock { $0.losePushAnswers = newValue } }
    }

    /// How many requests were sent (or refused here) to a path such as `/v1/pull`.
    func requests(to path: String) -> Int { state.withLock { $0.counts[path, default: 0] } }

    /// From now on pushes wait before they are sent, until ``releasePushes()``.
    func holdPushes() { state.withLock { $0.holdPushes = true } }

    /// From now on pushes are sent, but their answers wait before they reach the client, until
    /// ``releasePushes()`` or ``releaseHeldPushes()`` (also the answers of pushes already on their
    /// way: the hold is read when an answer comes).
    func holdPushAnswers() { state.withLock { $0.holdPushAnswers = true } }

    /// How many pushes (or push answers) are waiting.
    var heldPushes: Int { state.withLock { $0.held.count } }

    /// Lets the waiting pushes through; later ones wait again.
    func releaseHeldPushes() {
        let waiting = state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
        for push in waiting { push.resume() }
    }

    /// Lets the waiting pushes (and later ones) through.
    func releasePushes() {
        let waiting = state.withLock { state in
            state.holdPushes = false
            state.holdPushAnswers = false
            defer { state.held = [] }
            return state.held
        }
        for push in waiting { push.resume() }
    }

    func send(_ request: TransportRequest) async throws(RooftopError) -> TransportResponse {
        let path = String(request.path.prefix { $0 != "?" })
        let isPush = path == "/v1/push"
        let (blocked, hold) = state.withLock { state in
            state.counts[path, default: 0] += 1
            return (state.blockPushes && isPush, state.holdPushes && isPush)
        }
        if blocked { throw RooftopError(.noConnection, "pushes are held back by the test") }
        if hold { await wait(while: \.holdPushes) }
        var request = request
        if path == "/v1/pull", let pullPageSize, let body = request.body {
            do {
                var pull = try JSONDecoder().decode(PullRequest.self, from: body)
                pull.limit = pullPageSize
                request.body = try JSONEncoder().encode(pull)
            } catch {
                throw RooftopError(.internal, "the test transport could not rewrite a pull: \(error)")
            }
        }
        let response = try await inner.send(request)
        guard isPush else { return response }
        // Read when the answer comes: a push held before it was sent may meet either.
        await wait(while: \.holdPushAnswers)
        if losesPushAnswers { throw RooftopError(.noConnection, "the push's answer was lost by the test") }
        return response
    }

    /// Waits until released while the flag is set.
    private func wait(while flag: KeyPath<State, Bool>) async {
        await withCheckedContinuation { (push: CheckedContinuation<Void, Never>) in
            let goes = state.withLock { state in
                if state[keyPath: flag] { state.held.append(push) }
                return !state[keyPath: flag]
            }
            if goes { push.resume() }
        }
    }

    func shutdown() async {
        releasePushes()
        await inner.shutdown()
    }
}
