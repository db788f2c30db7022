import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization
import Testing
import RooftopTestSupport

/// ``LiveConnection`` without a server: attempts against a port that refuses connections, the
/// backoff between them timed on a test clock, and shutting down.
@Suite struct LiveConnectionBackoffTests {
    /// How long a wait may last before it counts as a hang. Nothing here is timed (the backoff
    /// runs on the test clock), but in a full run other tests' blocking work — the client's local
    /// store writes synchronously, with a flush each — can hold the cooperative pool's threads
    /// (two on this machine) for tens of seconds, and a 20-second guard failed there.
    static let hangGuard: Duration = .seconds(120)

    private let retry = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(5), multiplier: 2, jitter: 0)

    private func connection(
        to port: ClosedPort, clock: TestClock, retry: RetryPolicy? = nil,
        random: @escaping @Sendable () -> Double = { 0.5 }
    ) throws -> LiveConnection {
        let target = try LiveSocketTarget(
            serverURL: try #require(URL(string: "https://127.0.0.1:\(port.port)")), appId: "rooftop",
            trust: .certificateAuthority(pem: NetworkCertificates.selfSigned))
        return LiveConnection(target: target, token: "r:token", retry: retry ?? self.retry, clock: clock, random: random)
    }

    private func expectRefused(_ event: LiveEvent, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .disconnected(let error?) = event else {
            Issue.record("expected a failed attempt, got \(event)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == .noConnection, "\(error)", sourceLocation: sourceLocation)
    }

    @Test func failedAttemptsBackOffOnTheInjectedClock() async throws {
        let port = try ClosedPort()
        defer { port.close() }
        let clock = TestClock()
        let live = try connection(to: port, clock: clock)
        let recorder = StreamRecorder(live.events)
        await live.start()
        let schedule: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)]
        for (index, delay) in schedule.enumerated() {
            expectRefused(try await recorder.next(within: Self.hangGuard))
            try await clock.waitForSleepers(1, within: Self.hangGuard)
            #expect(clock.requestedSleeps == Array(schedule.prefix(index + 1)))
            if index == 0 {
                // The next attempt waits for the clock: its sleeper is still pending, and nothing
                // else can start an attempt (no real time is waited out to see that).
                #expect(clock.sleeperCount == 1)
                #expect(recorder.elements.count == 1)
            }
            clock.advance(by: delay)
        }
        expectRefused(try await recorder.next(within: Self.hangGuard))
        await live.close()
        try await recorder.waitForEnd(within: Self.hangGuard)
        #expect(!recorder.elements.contains(.connected))
        #expect(clock.sleeperCount == 0)
    }

    @Test func theInjectedRandomnessPicksTheJitter() async throws {
        let port = try ClosedPort()
        defer { port.close() }
        let clock = TestClock()
        let jittery = RetryPolicy(initialDelay: .seconds(10), maximumDelay: .seconds(60), multiplier: 2, jitter: 0.5)
        let picks = Mutex([0.0, 1.0 - 1e-9])
        let live = try connection(to: port, clock: clock, retry: jittery) {
            picks.withLock { $0.isEmpty ? 0.5 : $0.removeFirst() }
        }
        let recorder = StreamRecorder(live.events)
        await live.start()
        try await clock.waitForSleepers(1, within: Self.hangGuard)
        clock.advance(by: .seconds(5))
        try await TestWait.until(within: Self.hangGuard, "a second backoff") { clock.requestedSleeps.count == 2 }
        // 10 s spread down by half, then 20 s spread up by (almost) half.
        #expect(clock.requestedSleeps.first == .seconds(5))
        #expect(clock.requestedSleeps.last.map { $0 > .milliseconds(29_990) && $0 <= .seconds(30) } == true)
        await live.close()
        try await recorder.waitForEnd(within: Self.hangGuard)
    }

    // The test clock never advances here: close() returning at all shows that it does not wait
    // for the backoff sleep (the time limit only turns a hang into a failure).
    @Test(.timeLimit(.minutes(3)))
    func closeDuringTheBackoffEndsEverythingAtOnce() async throws {
        let port = try ClosedPort()
        defer { port.close() }
        let clock = TestClock()
        let live = try connection(to: port, clock: clock)
        let recorder = StreamRecorder(live.events)
        await live.start()
        try await clock.waitForSleepers(1, within: Self.hangGuard)
        await live.close()
        try await recorder.waitForEnd()
        #expect(clock.sleeperCount == 0, "the backoff sleep was cancelled")
        // Closed is final.
        await live.start()
        await live.close()
        #expect(recorder.elements.count == 1)
    }

    @Test(.enabled(if: TCPConnections.isAvailable))
    func closeCutsOffAnAttemptThatHangs() async throws {
        // The TCP handshake completes, then the TLS handshake never gets an answer.
        let port = try ClosedPort(silent: true)
        defer { port.close() }
        let clock = TestClock()
        let live = try connection(to: port, clock: clock)
        let recorder = StreamRecorder(live.events)
        await live.start()
        try await TestWait.until(
            within: Self.hangGuard, "the hanging connection (\(TCPConnections.openConnections(toPort: port.port)) open, events \(recorder.elements))"
        ) { TCPConnections.openConnections(toPort: port.port) == 1 }
        // close() must return although the handshake never will (it cuts the attempt off); the
        // deadlines below only catch a hang, they do not time anything.
        await live.close()
        try await recorder.waitForEnd()
        try await TestWait.until("the connection to be closed") {
            TCPConnections.openConnections(toPort: port.port) == 0
        }
        #expect(recorder.elements.isEmpty)
        #expect(clock.requestedSleeps.isEmpty)
    }

    @Test func retryNowSkipsTheWaitButKeepsCounting() async throws {
        let port = try ClosedPort()
        defer { port.close() }
        let clock = TestClock()
        let live = try connection(to: port, clock: clock)
        let recorder = StreamRecorder(live.events)
        await live.start()
        try await clock.waitForSleepers(1, within: Self.hangGuard)
        await live.retryNow()
        expectRefused(try await recorder.next(within: Self.hangGuard))
        expectRefused(try await recorder.next(within: Self.hangGuard))
        try await TestWait.until(within: Self.hangGuard, "a second backoff") { clock.requestedSleeps.count == 2 }
        #expect(clock.requestedSleeps == [.seconds(1), .seconds(2)])
        await live.close()
        try await recorder.waitForEnd(within: Self.hangGuard)
    }

    @Test func closeBeforeStartFinishesTheStream() async throws {
        let port = try ClosedPort()
        defer { port.close() }
        let clock = TestClock()
        let live = try connection(to: port, clock: clock)
        let recorder = StreamRecorder(live.events)
        await live.close()
        try await recorder.waitForEnd(within: Self.hangGuard)
        await live.start()
        #expect(recorder.elements.isEmpty)
        #expect(clock.requestedSleeps.isEmpty)
    }

    @Test func subscriptionsAreKeptWhileDisconnected() async throws {
        let port = try ClosedPort()
        defer { port.close() }
        let live = try connection(to: port, clock: TestClock())
        let work = try DatastoreID("work")
        await live.subscribe([.default, work, .default])
        await live.subscribe([.app, work])
        await live.unsubscribe([work, try DatastoreID("never")])
        #expect(await live.subscriptions == [.default, .app])
        await live.close()
    }
}
