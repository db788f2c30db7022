import RooftopShared

/// The configured clock (``ClientConfiguration/clock``) as the engines use it: "now" in
/// milliseconds since the epoch, and sleeping until such a time.
///
/// Retry times are stored in the outbox as epoch milliseconds, so they survive a restart. The
/// injected clock only measures elapsed time: "now" is the wall time when the engine started
/// plus the time the clock says has passed since. With a test clock, time moves only when the
/// test advances it, and retries happen without any real wait.
struct EngineClock: Sendable {
    /// The current time, in milliseconds since the epoch.
    let nowMillis: @Sendable () -> Int64
    /// Sleeps until a time (epoch milliseconds) on the clock; returns at once for a past time.
    /// Throws `CancellationError` when the task is cancelled.
    let sleepUntilMillis: @Sendable (Int64) async throws -> Void

    /// Wraps a clock; `originMillis` is the wall time that the clock's present instant stands for.
    init(_ clock: any Clock<Duration>, originMillis: Int64 = Timestamp.now.millisecondsSinceEpoch) {
        self = EngineClock.make(clock, originMillis: originMillis)
    }

    private init(
        nowMillis: @escaping @Sendable () -> Int64, sleepUntilMillis: @escaping @Sendable (Int64) async throws -> Void
    ) {
        self.nowMillis = nowMillis
        self.sleepUntilMillis = sleepUntilMillis
    }

    private static func make<C: Clock<Duration>>(_ clock: C, originMillis: Int64) -> EngineClock {
        let origin = clock.now
        return EngineClock(
            nowMillis: { originMillis + EngineClock.milliseconds(origin.duration(to: clock.now)) },
            sleepUntilMillis: { millis in
                let deadline = origin.advanced(by: .milliseconds(millis - originMillis))
                guard deadline > clock.now else { return }
                try await clock.sleep(until: deadline, tolerance: nil)
            })
    }

    /// A duration in whole milliseconds (rounded down).
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.saturatingMilliseconds
    }
}
