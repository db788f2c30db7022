import Foundation
import Synchronization

/// Collects the elements of a stream as they come, so a test can wait for the next one (or the
/// next matching one) with a deadline instead of iterating the stream itself.
///
/// ```swift
/// let events = StreamRecorder(connection.events)
/// #expect(try await events.next() == .connected)
/// ```
public final class StreamRecorder<Element: Sendable>: Sendable {
    private struct State {
        var elements: [Element] = []
        var cursor = 0
        var finished = false
    }

    /// The state, shared with the collecting task (a `Mutex` cannot be captured itself).
    private final class Box: Sendable {
        let state = Mutex(State())
    }

    private let box = Box()
    private let task: Task<Void, Never>

    /// Starts collecting `stream`; collecting ends with the stream, or with ``cancel()``.
    public init(_ stream: AsyncStream<Element>) {
        let box = self.box
        task = Task {
            for await element in stream { box.state.withLock { $0.elements.append(element) } }
            box.state.withLock { $0.finished = true }
        }
    }

    /// Every element received so far.
    public var elements: [Element] { box.state.withLock { $0.elements } }

    /// Whether the stream has finished.
    public var isFinished: Bool { box.state.withLock { $0.finished } }

    /// The next element (not taken yet) that matches `predicate` (by default any); elements
    /// before it are skipped.
    /// - Throws: ``TestSupportError`` when none comes in time or the stream ends first.
    @discardableResult
    public func next(
        within limit: Duration = .seconds(60), _ what: String = "the next element",
        where predicate: (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        var found: Element?
        try await TestWait.until(within: limit, "\(what); got \(elements)") {
            box.state.withLock { state in
                while state.cursor < state.elements.count {
                    let element = state.elements[state.cursor]
                    state.cursor += 1
                    if predicate(element) {
                        found = element
                        return true
                    }
                }
                return state.finished
            }
        }
        guard let found else { throw TestSupportError("the stream ended before \(what); got \(elements)") }
        return found
    }

    /// The first element received (taken or not) that matches `predicate`, waiting for one to
    /// come; unlike ``next(within:_:where:)`` it does not move past it, so two calls may return
    /// the same element.
    /// - Throws: ``TestSupportError`` when none comes in time.
    @discardableResult
    public func first(
        _ what: String, within limit: Duration = TestWait.patience, where predicate: (Element) -> Bool
    ) async throws -> Element {
        var found: Element?
        try await TestWait.until(within: limit, "\(what); got \(elements)") {
            found = box.state.withLock { $0.elements.first(where: predicate) }
            return found != nil
        }
        guard let found else { throw TestSupportError("no element: \(what)") }
        return found
    }

    /// Stops collecting (the stream's consumer goes away, so an observation can end).
    public func cancel() {
        task.cancel()
    }

    /// Waits until the stream finishes.
    /// - Throws: ``TestSupportError`` when it does not within `limit`.
    public func waitForEnd(within limit: Duration = .seconds(60)) async throws {
        try await TestWait.until(within: limit, "the end of the stream") { isFinished }
    }

    deinit { task.cancel() }
}
