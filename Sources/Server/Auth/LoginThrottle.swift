import RooftopShared

/// Limits failed log-ins per user name and per client address: after `maxFailures` failures
/// within `window`, further attempts are refused until the oldest failure leaves the window.
///
/// Time comes from an injected clock so that tests need no sleeps. State is per server process.
actor LoginThrottle {
    private let maxFailures: Int
    private let window: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private var failures: [String: [ContinuousClock.Instant]] = [:]

    init(maxFailures: Int, window: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.maxFailures = maxFailures
        self.window = window
        self.now = now
    }

    /// Throws ``RetryLaterError`` (`retryLater`, with the seconds to wait) when any of the keys
    /// has used up its failures.
    func check(_ keys: [String]) throws(RetryLaterError) {
        let current = now()
        for key in keys {
            let recent = (failures[key] ?? []).filter { current - $0 < window }
            failures[key] = recent.isEmpty ? nil : recent
            if recent.count >= maxFailures, let oldest = recent.first {
                let wait = window - (current - oldest)
                let seconds = max(1, Int(wait.components.seconds) + 1)
                throw RetryLaterError(
                    error: RooftopError(.retryLater, "too many failed log-ins; try again in \(seconds) s"),
                    retryAfterSeconds: seconds)
            }
        }
    }

    /// Records a failure against each key.
    func recordFailure(_ keys: [String]) {
        let current = now()
        for key in keys { failures[key, default: []].append(current) }
        if failures.count > 100_000 { failures = failures.filter { current - ($0.value.last ?? current) < window } }
    }

    /// Forgets the failures of the keys after a success.
    func recordSuccess(_ keys: [String]) {
        for key in keys { failures[key] = nil }
    }
}

/// A `retryLater` refusal with the number of seconds to wait, sent as `Retry-After`.
struct RetryLaterError: Error, Sendable {
    /// The error answered.
    var error: RooftopError
    /// Seconds to wait before retrying.
    var retryAfterSeconds: Int
}
