import Foundation
@testable import Rooftop
import Synchronization

/// Collects the events of a live connection as they come, so a test can wait for the next one
/// (or the next matching one) with a deadline instead of iterating the stream itself.
///
/// ```swift
/// let recorder = NetworkEventRecorder(connection.events)
/// #expect(try await recorder.next() == .connected)
/// ```
final class NetworkEventRecorder: Sendable {
    private struct State {
        var events: [LiveEvent] = []
        var cursor = 0
        var finished = false
    }

    /// The state, shared with the collecting task (a `Mutex` cannot be captured itself).
    private final class Box: Sendable {
        let state = Mutex(State())
    }

    private let box = Box()

    /// Starts collecting `stream`.
    init(_ stream: AsyncStream<LiveEvent>) {
        let box = self.box
        Task {
            for await event in stream { box.state.withLock { $0.events.append(event) } }
            box.state.withLock { $0.finished = true }
        }
    }

    /// Every event received so far.
    var events: [LiveEvent] { box.state.withLock { $0.events } }

    /// Whether the stream has finished.
    var isFinished: Bool { box.state.withLock { $0.finished } }

    /// The next event not taken yet, waiting up to `limit`.
    /// - Throws: ``NetworkTestError`` when none comes or the stream ends.
    func next(within limit: Duration = .seconds(20)) async throws -> LiveEvent {
        try await next(within: limit, "the next event") { _ in true }
    }

    /// The next event (not taken yet) that matches `predicate`; events before it are skipped.
    /// - Throws: ``NetworkTestError`` when none comes in time or the stream ends.
    func next(
        within limit: Duration = .seconds(20), _ what: String, where predicate: (LiveEvent) -> Bool
    ) async throws -> LiveEvent {
        var found: LiveEvent?
        try await NetworkWait.until(within: limit, "\(what); got \(events)") {
            box.state.withLock { state in
                while state.cursor < state.events.count {
                    let event = state.events[state.cursor]
                    state.cursor += 1
                    if predicate(event) {
                        found = event
                        return true
                    }
                }
                return state.finished
            }
        }
        guard let found else { throw NetworkTestError(description: "the stream ended before \(what); got \(events)") }
        return found
    }

    /// Waits until the stream finishes.
    func waitForEnd(within limit: Duration = .seconds(10)) async throws {
        try await NetworkWait.until(within: limit, "the end of the event stream") { isFinished }
    }
}
