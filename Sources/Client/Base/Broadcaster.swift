import Foundation
import Synchronization

/// Sends every element it is given to any number of observers, each through its own
/// `AsyncStream` (observers that subscribe later miss what came before).
///
/// Streams buffer without bound, so a slow observer never blocks the engines; it ends when the
/// task iterating it stops, or when the broadcaster finishes.
final class Broadcaster<Element: Sendable>: Sendable {
    private struct State {
        var observers: [UUID: AsyncStream<Element>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    /// A stream of every element published from now on.
    func stream() -> AsyncStream<Element> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        let finished = state.withLock { state in
            if !state.finished { state.observers[id] = continuation }
            return state.finished
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Whether anyone is listening (lets callers skip building elements nobody reads).
    var hasObservers: Bool { state.withLock { !$0.observers.isEmpty } }

    /// How many streams are open (tests check that finished observations let go).
    var observerCount: Int { state.withLock { $0.observers.count } }

    /// Sends an element to every current observer.
    func publish(_ element: Element) {
        for continuation in state.withLock({ Array($0.observers.values) }) { continuation.yield(element) }
    }

    /// Ends every stream, present and future.
    func finish() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
