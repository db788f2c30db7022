import Foundation
import Synchronization
import RooftopShared
import Testing

@testable import Rooftop
import RooftopTestSupport

/// Objects and query results as AsyncStreams that yield on change.
@Suite("Observation", .timeLimit(.minutes(5)))
struct ObservationTests {
    @Test("an object yields its state first, then on unsaved changes, queued changes and deletion")
    func objectChanges() async throws {
        let (client, _) = try offlineClient()
        let score = client.object("GameScore")
        let probe = StreamRecorder(score.changes)
        defer { probe.cancel() }
        #expect(try await probe.next("the initial state") == nil, "new and empty: does not exist yet")
        score["score"] = 1
        let edited = try await probe.next("the unsaved change") { $0?["score"] == 1 }
        #expect(edited?.objectId == score.objectId)
        try await score.saveEventually()
        try score.increment("score", by: 2)
        try await probe.next("the increment") { $0?["score"] == 3 }
        score.revert()
        try await probe.next("the revert") { $0?["score"] == 1 }
        try await score.deleteEventually()
        try await probe.next("the deletion") { $0 == nil }
        let states = probe.elements
        #expect(zip(states, states.dropFirst()).allSatisfy { $0 != $1 }, "no state is yielded twice in a row")
    }

    @Test("an object yields a state fetched from the server")
    func objectFetched() async throws {
        try await withRealServer { server in
            try await server.put("GameScore", "g1", ["score": 1])
            let client = try server.client()
            let score = try await client.query("GameScore").getObject("g1")
            try await score.pin()
            let probe = StreamRecorder(score.changes)
            defer { probe.cancel() }
            try await probe.next("the initial state") { $0?["score"] == 1 }
            let changed = try await server.put("GameScore", "g1", ["score": 2])
            try await score.fetch()
            let fetched = try await probe.next("the fetched state") { $0?["score"] == 2 }
            #expect(fetched?.version == changed.version)
        }
    }

    @Test("a newer stored state reaches the live object, its stream and local queries")
    func storeOnlyChange() async throws {
        let (client, _) = try offlineClient()
        func state(_ score: Int64, version: Int64) -> ObjectSnapshot {
            ObjectSnapshot(
                className: "GameScore", objectId: "g1", fields: ["score": .int(score)],
                createdAt: Timestamp(millisecondsSinceEpoch: 1_000), updatedAt: Timestamp(millisecondsSinceEpoch: version * 1_000),
                version: version)
        }
        let score = client.core.adopt(state(1, version: 1))
        try await score.pin()
        let probe = StreamRecorder(score.changes)
        defer { probe.cancel() }
        try await probe.next("the initial state") { $0?["score"] == 1 }
        // As a pull would: the store gets the server's new state.
        try client.core.storeServerState(state(2, version: 2))
        try await probe.next("the pulled state") { $0?["score"] == 2 }
        #expect(score.int("score") == 2)
        #expect(try await client.query("GameScore").fromLocalDatastore().where(Field("score") == 2).count() == 1)
    }

    @Test("a local query yields again when objects of its class change, stored or unsaved")
    func queryChanges() async throws {
        let (client, _) = try offlineClient()
        let high = client.query("GameScore").fromLocalDatastore().where(Field("score") > 10)
        let probe = StreamRecorder(high.changes())
        defer { probe.cancel() }
        let initial = try await probe.next("the initial result")
        #expect(initial.objects.isEmpty && initial.fromCache)
        let score = client.object("GameScore")
        score["score"] = 20
        try await score.pin()
        let pinned = try await probe.next("the pinned object") { $0.totalCount == 1 }
        #expect(pinned.objects.first === score)
        score["score"] = 5
        try await probe.next("the unsaved change") { $0.totalCount == 0 }
        let note = client.object("Note")
        note["score"] = 50
        try await note.pin()
        score["score"] = 30
        let last = try await probe.next("the second unsaved change") { $0.totalCount == 1 }
        #expect(last.objects.map(\.className) == ["GameScore"], "other classes are not in the result")
    }

    @Test("bursts of changes coalesce into fewer evaluations that end on the last state")
    func coalescing() async throws {
        let (client, _) = try offlineClient()
        let score = client.object("GameScore")
        score["score"] = 0
        try await score.pin()
        let query = client.query("GameScore").fromLocalDatastore().where(Field("score") >= 0)
        let probe = StreamRecorder(query.changes())
        defer { probe.cancel() }
        try await probe.next("the initial result")
        for value in 1...200 { score["score"] = .int(Int64(value)) }
        try await probe.next("the last state") { $0.objects.first?.int("score") == 200 }
        #expect(probe.elements.count < 100, "\(probe.elements.count) results for 200 changes")
    }

    @Test("a server query observes its cached result, which remoteAndStore refreshes")
    func cachedQueryChanges() async throws {
        try await withRealServer { server in
            try await server.put("GameScore", "g1", ["score": 10])
            let client = try server.client()
            let top = client.query("GameScore").order(by: "score", descending: true).limit(5)
            let probe = StreamRecorder(top.changes())
            defer { probe.cancel() }
            #expect(try await probe.next("the empty result").objects.isEmpty)
            _ = try await top.find(policy: .remoteAndStore)
            let cached = try await probe.next("the cached result") { $0.totalCount == 1 }
            #expect(cached.objectIds == ["g1"])
            try await server.put("GameScore", "g2", ["score": 20])
            _ = try await top.find(policy: .remoteAndStore)
            try await probe.next("the refreshed result") { $0.objectIds == ["g2", "g1"] }
        }
    }

    @Test("a reader cancelled while elements are published to it: neither waits on the other")
    func cancelWhilePublishing() async throws {
        // A publish resumes a waiting reader (the runtime takes the reader task's lock); cancelling
        // the reader holds that lock while its stream's termination handler runs. Yielding under
        // the broadcaster's lock while the handler took it deadlocked both (found by the
        // convergence harness, a continuous sync stopped while a live signal was published). The
        // publisher and the canceller run on threads of their own, so that a deadlock cannot take
        // the wait below with it.
        let broadcaster = Broadcaster<Int>()
        let readers = 2_000
        let tasks = (0..<readers).map { _ in
            let stream = broadcaster.stream()
            return Task { for await _ in stream {} }
        }
        let cancelled = Mutex(0)
        let publishing = Mutex(true)
        let publisher = Thread {
            var element = 0
            while publishing.withLock({ $0 }) {
                broadcaster.publish(element)
                element &+= 1
            }
        }
        let canceller = Thread {
            for task in tasks {
                task.cancel()
                cancelled.withLock { $0 += 1 }
            }
            publishing.withLock { $0 = false }
        }
        publisher.start()
        canceller.start()
        try await TestWait.until(within: .seconds(120), "\(readers) readers cancelled while elements are published") {
            cancelled.withLock { $0 } == readers
        }
        try await TestWait.until("the cancelled readers' streams end") { broadcaster.observerCount == 0 }
    }

    @Test("a store-change stream opened after the store closed ends at once")
    func streamAfterClose() async throws {
        let broadcaster = Broadcaster<StoreChange>()
        let before = broadcaster.stream()
        broadcaster.finish()
        let after = broadcaster.stream()
        broadcaster.publish(StoreChange(datastores: [.app]))
        // Both end without yielding: iterating them terminates.
        for await change in before { Issue.record("received \(change) after finishing") }
        for await change in after { Issue.record("received \(change) after finishing") }
        #expect(broadcaster.observerCount == 0)
    }

    @Test("streams let go of their subscriptions when the consumer stops")
    func noLeaks() async throws {
        let (client, _) = try offlineClient()
        let bus = client.core.store.changes
        let edits = client.core.edits
        let score = client.object("GameScore")
        score["score"] = 1
        try await score.pin()
        let objectProbe = StreamRecorder(score.changes)
        let queryProbe = StreamRecorder(client.query("GameScore").fromLocalDatastore().changes())
        try await objectProbe.next("the object's state")
        try await queryProbe.next("the query's result")
        #expect(bus.observerCount == 2 && edits.observerCount == 2)
        objectProbe.cancel()
        queryProbe.cancel()
        try await objectProbe.waitForEnd()
        try await queryProbe.waitForEnd()
        try await TestWait.until("the subscriptions end") { bus.observerCount == 0 && edits.observerCount == 0 }
        do {
            let dropped = client.query("GameScore").fromLocalDatastore().changes()
            _ = dropped
        }
        try await TestWait.until("a stream dropped without iterating ends") {
            bus.observerCount == 0 && edits.observerCount == 0
        }
    }

    @Test("shutting the client down ends the streams")
    func shutdownEnds() async throws {
        let (client, _) = try offlineClient()
        let probe = StreamRecorder(client.query("GameScore").fromLocalDatastore().changes())
        try await probe.next("the initial result")
        await client.shutdown()
        try await probe.waitForEnd()
        #expect(probe.isFinished)
    }
}
