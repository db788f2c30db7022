import RooftopShared
import Testing

@testable import Rooftop

/// A mutation's outbox events arrive `queued` first, even when the engine reads the change (and
/// says it is `sent`) before the saving call has published `queued`.
@Suite("Outbox events in order")
struct OutboxEventsTests {
    @Test("an event of a mutation being queued waits for its queued event; others pass; a failed queueing lets go")
    func order() async throws {
        let events = OutboxEvents()
        let stream = events.stream()
        let key = ObjectKey(datastore: .default, className: "Note", objectId: "n1")
        let (early, other, failed) = (MutationID.generate(), MutationID.generate(), MutationID.generate())
        events.expect(early)
        events.expect(failed)
        events.publish(OutboxEvent(mutationId: early, key: key, kind: .sent))
        events.publish(OutboxEvent(mutationId: other, key: key, kind: .sent))
        events.publish(OutboxEvent(mutationId: failed, key: key, kind: .sent))
        events.announce(OutboxEvent(mutationId: early, key: key, kind: .queued))
        events.publish(OutboxEvent(mutationId: early, key: key, kind: .acknowledged(version: 1, merges: [])))
        events.forget(failed)
        events.forget(early)
        events.finish()
        var seen: [String] = []
        for await event in stream {
            let name = event.mutationId == early ? "early" : event.mutationId == other ? "other" : "failed"
            seen.append("\(name) \(event.kind)")
        }
        #expect(seen == [
            "other sent", "early queued", "early sent", "early acknowledged(version: 1, merges: [])", "failed sent",
        ])
    }
}
