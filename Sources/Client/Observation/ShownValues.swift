import Foundation
import Synchronization

/// What an observable object (``LiveQuery``, ``LiveSyncStatus``) shows, as async sequences for
/// code outside SwiftUI: each stream gives the value shown when it is made (if any), then every
/// value shown after it, in order; every stream ends when the object goes away or stops following
/// (``finish()``).
///
/// Streams buffer without bound, as the engines' broadcasts do: a slow reader never holds up the
/// object, and reads every value it showed.
final class ShownValues<Value: Sendable>: Sendable {
    private struct State {
        var last: Value?
        var observers: [UUID: AsyncStream<Value>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    /// Records the value shown now and gives it to every stream.
    func show(_ value: Value) {
        state.withLock { state in
            state.last = value
            // Under the lock, so that every stream gets the values in the order they were shown.
            for observer in state.observers.values { observer.yield(value) }
        }
    }

    /// The value shown now (if any), then every value shown from now on.
    func stream() -> AsyncStream<Value> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        let finished = state.withLock { state in
            if let last = state.last { continuation.yield(last) }
            if !state.finished { state.observers[id] = continuation }
            return state.finished
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Ends every stream, present and future (the object will show nothing more).
    func finish() {
        let observers = state.withLock { state in
            state.finished = true
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        // Outside the lock: finishing runs `onTermination`.
        for observer in observers { observer.finish() }
    }

    /// Whether nothing was shown yet.
    var isEmpty: Bool { state.withLock { $0.last == nil } }

    /// How many streams are open (tests check that they end).
    var observerCount: Int { state.withLock { $0.observers.count } }

    deinit {
        // Finished outside the lock: finishing runs `onTermination`.
        for observer in state.withLock({ Array($0.observers.values) }) { observer.finish() }
    }
}
