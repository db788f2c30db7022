import Foundation
import Observation
import Rooftop
import RooftopShared
import RooftopTestSupport
import Testing

/// Observation as a SwiftUI view uses it, on Linux: `withObservationTracking` reads properties
/// and is told (once) when one of them changes.
@MainActor
final class ChangeSignal {
    private(set) var count = 0

    /// Tracks what `read` reads; the next change of any of it bumps ``count``.
    func track(_ read: @escaping @MainActor () -> Void) {
        withObservationTracking {
            read()
        } onChange: {
            Task { @MainActor in self.count += 1 }
        }
    }

    /// Waits (polling the main actor, with the tests' deadline) until ``count`` reaches `target`.
    /// - Throws: ``TestSupportError`` naming `what` when it does not.
    func wait(until target: Int, _ what: String) async throws {
        try await TestWait.until("a change: \(what)") { count >= target }
    }
}

@Suite("The client as an app uses it: observation")
struct ObservationTests {
    @Test("a LiveQuery's objects follow the local data, on the main actor, as withObservationTracking sees them")
    @MainActor
    func liveQuery() async throws {
        let client = try await ErrorHandlingTests.unreachableClient()
        let live = LiveQuery(client.query("Task").fromLocalDatastore().order(by: "rank"))
        let signal = ChangeSignal()
        signal.track { _ = live.isLoaded }
        try await signal.wait(until: 1, "the first result")
        #expect(live.isLoaded && live.objects.isEmpty && live.totalCount == 0)

        signal.track { _ = live.objects }
        let first = client.object("Task")
        first["title"] = "write the docs"
        first["rank"] = 2
        try await first.saveEventually()
        try await signal.wait(until: 2, "a saved object")
        #expect(live.objects.map(\.objectId) == [first.objectId])
        #expect(live.totalCount == 1)

        signal.track { _ = live.objects }
        let second = client.object("Task")
        second["title"] = "ship"
        second["rank"] = 1
        try await second.saveEventually()
        try await signal.wait(until: 3, "another object")
        #expect(live.objects.map(\.objectId) == [second.objectId, first.objectId], "in the query's order")

        // An edit of an object already shown is a change too (a view reads its fields again).
        signal.track { _ = live.objects }
        first["title"] = "write the guide"
        try await signal.wait(until: 4, "an edited field")
        #expect(live.objects.last?.string("title") == "write the guide")

        // A refresh against a server that cannot be reached keeps the result and says why.
        let remote = LiveQuery(client.query("Task"))
        await remote.refresh()
        #expect(remote.lastError?.code == .noConnection)
        #expect(!remote.isRefreshing)
        await client.shutdown()
    }

    @Test("a LiveSyncStatus follows the datastore's offline queue")
    @MainActor
    func liveSyncStatus() async throws {
        let client = try await ErrorHandlingTests.unreachableClient()
        let datastore = try await client.datastores.open(.default)
        let sync = LiveSyncStatus(datastore)
        let signal = ChangeSignal()
        signal.track { _ = sync.status }
        let note = datastore.object("Note")
        note["text"] = "offline"
        try await note.saveEventually()
        try await signal.wait(until: 1, "a queued change")
        try await TestWait.until("the queued change to be outgoing") { sync.status.outgoing }
        #expect(!sync.status.connected)
        await client.shutdown()
    }
}
