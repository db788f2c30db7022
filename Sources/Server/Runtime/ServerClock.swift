import RooftopShared

/// Where the server reads the time and waits: the system clock in production, a clock a test
/// moves by hand to expire sessions, run the sweepers without waiting or age the log-in
/// throttle's windows. The server's one clock: the wall-clock time stamps what is stored and
/// expires sessions; the monotonic reading measures spans (throttle windows), unmoved by changes
/// of the wall clock.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.clock = ServerClock(now: { testTime.now }, sleep: { try await testTime.sleep(for: $0) })
/// ```
public struct ServerClock: Sendable {
    /// The current wall-clock time.
    public var now: @Sendable () -> Timestamp
    /// Waits `duration`; throws `CancellationError` when the task is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void
    /// The current monotonic instant, for spans of time.
    public var monotonic: @Sendable () -> ContinuousClock.Instant

    /// A clock reading and waiting through the given functions.
    /// - Parameter monotonic: The monotonic reading (default: the system's continuous clock).
    public init(
        now: @escaping @Sendable () -> Timestamp, sleep: @escaping @Sendable (Duration) async throws -> Void,
        monotonic: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.now = now
        self.sleep = sleep
        self.monotonic = monotonic
    }

    /// The system's clock (the default).
    public static let system = ServerClock(now: { .now }, sleep: { try await Task.sleep(for: $0) })
}
