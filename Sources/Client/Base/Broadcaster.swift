import Foundation
import Synchronization

/// Sends every element it is given to any number of observers, each through its own
/// `AsyncStream`, in the order they were published.
///
/// By default an observer that subscribes later misses what came before. A broadcaster made with
/// `replayingLatest: true` gives each new stream the latest element first — what an observable
/// object (``LiveQuery``, ``LiveSyncStatus``) shows now, then every value it shows after it.
///
/// Streams buffer without bound, so a slow observer never blocks the engines; a stream ends when
/// the task iterating it stops, when the broadcaster finishes, or when it goes away.
///
/// ```swift
/// let shown = Broadcaster<DatastoreStatus>(replayingLatest: true)
/// shown.publish(status)
/// for await status in shown.stream() { ... }  // `status` first, then every later one
/// ```
final class Broadcaster<Element: Sendable>: Sendable {
    private struct State {
        var latest: Element?
        var observers: [UUID: AsyncStream<Element>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())
    /// Held while elements are handed to streams (and while a stream is registered or all are
    /// finished), so that every stream gets them in the order they were published. Never taken
    /// by a stream's termination handler, which takes only `state`.
    ///
    /// Handing an element to a waiting reader resumes its task, which takes the runtime's lock of
    /// that task; cancelling the task holds that lock while the stream's termination handler runs.
    /// Handed under `state`, which the handler takes, the two waited on each other forever (the
    /// convergence harness found it: a continuous sync stopped while a live signal was
    /// published). `state` is therefore only ever held for moments, never around a yield.
    private let delivery = Mutex(())
    private let replayingLatest: Bool

    /// A broadcaster.
    /// - Parameter replayingLatest: Whether a new stream starts with the latest element published
    ///   (default `false`).
    init(replayingLatest: Bool = false) {
        self.replayingLatest = replayingLatest
    }

    /// A stream of every element published from now on, after the latest one when replaying.
    func stream() -> AsyncStream<Element> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        delivery.withLock { _ in
            let (latest, finished) = state.withLock { state in
                if !state.finished { state.observers[id] = continuation }
                return (state.latest, state.finished)
            }
            // Nobody reads the new stream yet: yielding to it resumes no task.
            if let latest { continuation.yield(latest) }
            // Outside `state`: finishing runs `onTermination`, which takes it.
            if finished { continuation.finish() }
        }
        return stream
    }

    /// The latest element published, when replaying; `nil` before the first or when not replaying.
    var latest: Element? { state.withLock { $0.latest } }

    /// Whether anyone is listening (lets callers skip building elements nobody reads).
    var hasObservers: Bool { state.withLock { !$0.observers.isEmpty } }

    /// How many streams are open (tests check that finished observations let go).
    var observerCount: Int { state.withLock { $0.observers.count } }

    /// Sends an element to every current observer.
    func publish(_ element: Element) {
        delivery.withLock { _ in
            let observers = state.withLock { state in
                if replayingLatest { state.latest = element }
                return Array(state.observers.values)
            }
            // Outside `state` (see ``delivery``); a stream that ended meanwhile drops it.
            for observer in observers { observer.yield(element) }
        }
    }

    /// Ends every stream, present and future.
    func finish() {
        delivery.withLock { _ in
            let observers = state.withLock { state in
                state.finished = true
                defer { state.observers.removeAll() }
                return Array(state.observers.values)
            }
            for observer in observers { observer.finish() }
        }
    }

    deinit {
        for observer in state.withLock({ Array($0.observers.values) }) { observer.finish() }
    }
}
