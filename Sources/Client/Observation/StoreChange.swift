import Foundation
import RooftopShared
import Synchronization

/// What one committed change of the local store touched.
public struct StoreChange: Sendable, Hashable {
    /// The objects whose local view changed (created, updated, deleted, purged).
    public var objects: Set<ObjectKey> = []
    /// The datastores concerned.
    public var datastores: Set<DatastoreID> = []
    /// Whether the offline queue changed (queued, sent, acknowledged, rejected).
    public var outbox = false

    /// Whether nothing changed.
    public var isEmpty: Bool { objects.isEmpty && datastores.isEmpty && !outbox }
}

/// Broadcasts store changes to any number of observers, each through its own `AsyncStream`.
final class ChangeBus: Sendable {
    private let observers = Mutex<[UUID: AsyncStream<StoreChange>.Continuation]>([:])

    /// A stream of every change published from now on; it ends when the task iterating it is
    /// cancelled or the bus is closed.
    func stream() -> AsyncStream<StoreChange> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in
            _ = self?.observers.withLock { $0.removeValue(forKey: id) }
        }
        observers.withLock { $0[id] = continuation }
        return stream
    }

    /// How many streams are open (tests check that finished observations let go).
    var observerCount: Int { observers.withLock { $0.count } }

    /// Sends a change to every observer.
    func publish(_ change: StoreChange) {
        guard !change.isEmpty else { return }
        for continuation in observers.withLock({ Array($0.values) }) { continuation.yield(change) }
    }

    /// Ends every stream.
    func close() {
        let continuations = observers.withLock { observers in
            defer { observers.removeAll() }
            return Array(observers.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
