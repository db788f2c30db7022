import RooftopShared

/// Where the server reads the time and waits: the system clock in production, a clock a test
/// moves by hand to expire sessions or run the session sweeper without waiting.
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

    /// A clock reading and waiting through the given functions.
    public init(now: @escaping @Sendable () -> Timestamp, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// The system's clock (the default).
    public static let system = ServerClock(now: { .now }, sleep: { try await Task.sleep(for: $0) })
}
