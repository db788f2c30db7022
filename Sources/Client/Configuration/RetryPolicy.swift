import Foundation
import RooftopShared

/// How the offline queue retries sends that failed for a passing reason (no connection, a
/// timeout, a server error): exponential backoff with jitter, capped.
///
/// The delay before attempt `n` (counting from 1 for the first retry) is
/// `min(maximumDelay, initialDelay × multiplier^(n-1))`, then spread by ±`jitter` (a fraction).
public struct RetryPolicy: Sendable, Hashable {
    /// The delay before the first retry (default 1 second).
    public var initialDelay: Duration = .seconds(1)
    /// The longest delay (default 60 seconds).
    public var maximumDelay: Duration = .seconds(60)
    /// How much each delay grows (default 2).
    public var multiplier: Double = 2
    /// The fraction by which a delay is randomly spread, 0...1 (default 0.2).
    public var jitter: Double = 0.2

    /// The default policy: 1 s, doubling, up to 60 s, ±20 %.
    public static let `default` = RetryPolicy()

    /// A policy.
    public init(
        initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60), multiplier: Double = 2,
        jitter: Double = 0.2
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The delay before retry number `attempt` (1 for the first retry), with `random` in 0..<1
    /// choosing the jitter (inject it in tests).
    public func delay(beforeAttempt attempt: Int, random: Double) -> Duration {
        let exponent = Double(max(attempt, 1) - 1)
        let base = seconds(initialDelay) * pow(multiplier, exponent)
        let capped = min(base, seconds(maximumDelay))
        let spread = capped * jitter * (random * 2 - 1)
        return .clampedMilliseconds(max(0, capped + spread) * 1000)
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
