@testable import RooftopServer
import RooftopShared
import Synchronization
import Testing

/// The log-in throttle with an injected clock: attempts are counted when reserved, a name alone
/// is only slowed down, and memory stays bounded whatever keys arrive.
@Suite("Log-in throttle")
struct LoginThrottleTests {
    /// A clock that moves only when told to.
    final class ManualClock: Sendable {
        private let current = Mutex(ContinuousClock.now)
        func advance(by duration: Duration) { current.withLock { $0 = $0.advanced(by: duration) } }
        var now: @Sendable () -> ContinuousClock.Instant { { self.current.withLock { $0 } } }
    }

    static func throttle(_ clock: ManualClock, capacity: Int = 20_000) -> LoginThrottle {
        LoginThrottle(
            policy: .init(maxFailures: 5, window: .seconds(60), capacity: capacity),
            clock: ServerClock(now: { .now }, sleep: { try await Task.sleep(for: $0) }, monotonic: clock.now))
    }

    @Test("attempts count when reserved: 20 at once, none finished, only 5 pass")
    func reservedBeforeChecking() async throws {
        let clock = ManualClock()
        let throttle = Self.throttle(clock)
        let keys = ThrottleKeys.logIn(usernameKey: "victim", address: "10.0.0.1")
        let passed = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { (try? await throttle.reserve(hard: keys.hard, soft: keys.soft)) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(passed == 5)
        // The window passes: the address may try again.
        clock.advance(by: .seconds(61))
        _ = try await throttle.reserve(hard: keys.hard, soft: keys.soft)
    }

    @Test("a refusal says how long to wait; a success forgives the name's attempts, and only its own slot of the address's")
    func retryAfterAndForgiveness() async throws {
        let clock = ManualClock()
        let throttle = Self.throttle(clock)
        let keys = ThrottleKeys.logIn(usernameKey: "user", address: "10.0.0.2")
        let other = ThrottleKeys.logIn(usernameKey: "other", address: "10.0.0.2")
        for _ in 0..<4 {
            _ = try await throttle.reserve(hard: keys.hard, soft: keys.soft)
            clock.advance(by: .seconds(10))
        }
        let fifth = try await throttle.reserve(hard: keys.hard, soft: keys.soft)
        await throttle.forgive(fifth)
        // The address still holds its four failures: one more attempt, of any name, is allowed.
        _ = try await throttle.reserve(hard: other.hard, soft: other.soft)
        do {
            _ = try await throttle.reserve(hard: keys.hard, soft: keys.soft)
            Issue.record("the sixth attempt in the window was not refused")
        } catch {
            #expect(error.error.code == .retryLater)
            // Until the address's oldest failure, 40 s ago, leaves the 60 s window.
            #expect((19...21).contains(error.retryAfterSeconds), "\(error.retryAfterSeconds)")
        }
    }

    @Test("a name guessed at from many addresses is delayed, growing to a bound, never refused")
    func nameAloneIsOnlySlowed() async throws {
        let clock = ManualClock()
        let throttle = Self.throttle(clock)
        var delays: [Duration] = []
        for attempt in 0..<40 {
            let keys = ThrottleKeys.logIn(usernameKey: "victim", address: "10.1.0.\(attempt)")
            delays.append(try await throttle.reserve(hard: keys.hard, soft: keys.soft).delay)
        }
        #expect(delays.prefix(5).allSatisfy { $0 == .zero })
        #expect(delays[5] == .milliseconds(250))
        #expect(delays[6] == .milliseconds(500))
        #expect(delays == delays.sorted())
        #expect(delays.last == .seconds(4))
        // The victim, from an address of their own, still gets in (after the bounded delay).
        let own = ThrottleKeys.logIn(usernameKey: "victim", address: "10.2.0.1")
        let reservation = try await throttle.reserve(hard: own.hard, soft: own.soft)
        #expect(reservation.delay == .seconds(4))
        await throttle.forgive(reservation)
        #expect(try await throttle.reserve(hard: own.hard, soft: own.soft).delay == .zero)
    }

    @Test("the admin key: refused per address after 5 failures, even when right, until the window passes")
    func adminKey() async throws {
        let clock = ManualClock()
        let throttle = Self.throttle(clock)
        let attacker = ThrottleKeys.adminKey(address: "10.3.0.1")
        for _ in 0..<5 { try await throttle.check(hard: attacker, matches: false) }
        await #expect(throws: RetryLaterError.self) { try await throttle.check(hard: attacker, matches: true) }
        // Elsewhere the right key passes; it does not wipe out that address's failures either.
        let admin = ThrottleKeys.adminKey(address: "10.3.0.2")
        for _ in 0..<4 { try await throttle.check(hard: admin, matches: false) }
        try await throttle.check(hard: admin, matches: true)
        try await throttle.check(hard: admin, matches: false)
        await #expect(throws: RetryLaterError.self) { try await throttle.check(hard: admin, matches: true) }
        clock.advance(by: .seconds(61))
        try await throttle.check(hard: admin, matches: true)
    }

    @Test("memory is bounded: 100,000 distinct long keys keep at most the capacity")
    func boundedMemory() async throws {
        let clock = ManualClock()
        let throttle = Self.throttle(clock, capacity: 1000)
        let long = String(repeating: "n", count: 10_000)
        for index in 0..<100_000 {
            await throttle.recordFailure(["user:\(long)\(index)"])
            if index % 997 == 0 { #expect(await throttle.keyCount <= 1000) }
        }
        #expect(await throttle.keyCount <= 1000)
        // Recent keys survive eviction: the newest is still counted.
        let keys = ["address:10.4.0.1"]
        for _ in 0..<5 { await throttle.recordFailure(keys) }
        await #expect(throws: RetryLaterError.self) { try await throttle.reserve(hard: keys) }
    }
}
