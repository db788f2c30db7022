import Foundation
import Synchronization
import RooftopTestSupport

/// A clock that moves only when the test says so: `sleep` waits until ``advance(by:)`` carries
/// `now` past the deadline (or the sleeping task is cancelled). Every requested sleep is
/// recorded, so tests can check a backoff schedule without waiting for it.
///
/// ```swift
/// let clock = TestClock()
/// configuration.clock = clock
/// try await clock.waitForSleepers(1)
/// #expect(clock.requestedSleeps == [.seconds(1)])
/// clock.advance(by: .seconds(1))
/// ```
final class TestClock: Clock, Sendable {
    /// A point on the test clock: the time advanced since the clock was made.
    struct Instant: InstantProtocol {
        /// The time since the start.
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: UUID
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var cancelled: Set<UUID> = []
        var requested: [Duration] = []
    }

    private let state = Mutex(State())

    /// The current instant.
    var now: Instant { state.withLock { $0.now } }

    /// The clock has no granularity.
    var minimumResolution: Duration { .zero }

    /// Every sleep asked for, as a duration from the instant it was asked, in order.
    var requestedSleeps: [Duration] { state.withLock { $0.requested } }

    /// How many sleeps are waiting.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline a task sleeps until, as an offset from the clock's start.
    var nextDeadline: Duration? { state.withLock { $0.sleepers.map(\.deadline.offset).min() } }

    /// Suspends until the clock is advanced to `deadline`.
    /// - Throws: `CancellationError` when the task is cancelled first.
    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    state.requested.append(state.now.duration(to: deadline))
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { state in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    // Cancelled before the sleeper was registered: the registration sees this.
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward, waking every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let due: [Sleeper] = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (in real time, up to `limit`) until `count` sleeps are waiting.
    /// - Throws: ``TestSupportError`` when they do not come in time.
    func waitForSleepers(_ count: Int, within limit: Duration = TestWait.patience) async throws {
        try await TestWait.until(within: limit, "\(count) sleepers on the test clock (have \(sleeperCount))") {
            sleeperCount >= count
        }
    }
}
