/// Waiting in tests: on a condition with a deadline, never a fixed sleep.
///
/// ```swift
/// try await TestWait.until("the change is sent") { try client.outbox.status(of: id) == .sent }
/// ```
public enum TestWait {
    /// How long a wait that only guards against a hang lasts by default: generous, since a loaded
    /// CI machine (or two suites at once on two cores) can stall a process for tens of seconds,
    /// and a wait whose condition holds returns at once.
    public static let patience: Duration = .seconds(60)

    /// Polls `condition` every few milliseconds (real time) until it holds or `limit` passes.
    /// - Parameters:
    ///   - limit: How long to wait at most (default ``patience``).
    ///   - what: What is awaited, for the timeout's message.
    ///   - interval: The pause between checks (default 2 ms; longer for a check that is itself a
    ///     request to a server).
    ///   - isolation: The caller's actor, where `condition` runs (the main actor for a view's state).
    ///   - condition: Checked at once, then after each pause; an error it throws ends the wait.
    /// - Throws: ``TestSupportError`` naming `what` on timeout; whatever `condition` throws.
    public static func until(
        within limit: Duration = patience, _ what: @autoclosure () -> String, every interval: Duration = .milliseconds(2),
        isolation: isolated (any Actor)? = #isolation,
        _ condition: () async throws -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: limit)
        while try await !condition() {
            guard clock.now < end else { throw TestSupportError("timed out after \(limit) waiting for \(what())") }
            try await Task.sleep(for: interval)
        }
    }
}

/// A failed expectation of a test-support helper.
public struct TestSupportError: Error, CustomStringConvertible {
    /// What did not happen.
    public var description: String

    /// An error saying what did not happen.
    public init(_ description: String) { self.description = description }
}
