import Synchronization
import RooftopShared

/// The outbox's events (``Outbox/events``), each mutation's in the order they happened: `queued`
/// first. A change is committed to the queue before its `queued` event can be published, and the
/// engine may pick it up in between (a round already under way reads it): its `sent` (or any
/// later) event is then held until `queued` is published.
///
/// ```swift
/// events.expect(id)                        // before the transaction that queues `id`
/// events.announce(OutboxEvent(mutationId: id, key: key, kind: .queued))  // after it commits
/// ```
final class OutboxEvents: Sendable {
    private let broadcaster = Broadcaster<OutboxEvent>()
    /// The mutations being queued whose `queued` event is not published yet, with the events of
    /// theirs that came first. Publishing happens under this lock, so no event overtakes them.
    private let unannounced = Mutex<[MutationID: [OutboxEvent]]>([:])

    /// A stream of every event published from now on.
    func stream() -> AsyncStream<OutboxEvent> { broadcaster.stream() }

    /// Notes that `id` is about to be queued: its events wait for ``announce(_:)`` (or
    /// ``forget(_:)`` when it was not queued after all).
    func expect(_ id: MutationID) {
        unannounced.withLock { $0[id] = [] }
    }

    /// Publishes a mutation's `queued` event, then those of its events that came first.
    func announce(_ queued: OutboxEvent) {
        unannounced.withLock { waiting in
            let held = waiting.removeValue(forKey: queued.mutationId) ?? []
            broadcaster.publish(queued)
            for event in held { broadcaster.publish(event) }
        }
    }

    /// Stops waiting for `id`'s `queued` event (its transaction failed), publishing what was held.
    func forget(_ id: MutationID) {
        unannounced.withLock { waiting in
            for event in waiting.removeValue(forKey: id) ?? [] { broadcaster.publish(event) }
        }
    }

    /// Ends every stream, present and future.
    func finish() { broadcaster.finish() }

    /// Publishes an event, or holds it while its mutation's `queued` event is still to come.
    func publish(_ event: OutboxEvent) {
        unannounced.withLock { waiting in
            if waiting[event.mutationId] != nil {
                waiting[event.mutationId]?.append(event)
            } else {
                broadcaster.publish(event)
            }
        }
    }
}
