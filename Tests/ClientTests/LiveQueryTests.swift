import Foundation
@testable import Rooftop
import RooftopShared
import RooftopTestSupport
import Testing

/// `LiveQuery` and `LiveSyncStatus` as code outside SwiftUI uses them: a refresh that returns
/// once its result is shown, and the shown values as async sequences.
@Suite("LiveQuery and LiveSyncStatus outside SwiftUI", .timeLimit(.minutes(5)))
struct LiveQueryTests {
    @Test("refresh() returns once the refreshed result is shown")
    @MainActor
    func refreshShows() async throws {
        let server = try await RealSyncServer.start()
        do {
            try await server.put("GameScore", "g1", ["score": 1])
            let client = try server.client()
            let live = LiveQuery(client.query("GameScore").order(by: "score"))
            await live.refresh()
            #expect(live.lastError == nil)
            #expect(live.objects.map(\.objectId) == ["g1"], "shown when refresh() returns")
            #expect(live.totalCount == 1)
            try await server.put("GameScore", "g2", ["score": 2])
            await live.refresh()
            #expect(live.objects.map(\.objectId) == ["g1", "g2"])
            #expect(live.totalCount == 2)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("updates gives the result shown now, then each new one in order, and ends when the LiveQuery goes away")
    @MainActor
    func queryUpdates() async throws {
        let (client, _) = try offlineClient()
        let recorder: StreamRecorder<FetchResult>
        do {
            let live = LiveQuery(client.query("Task").fromLocalDatastore().order(by: "rank"))
            let first = StreamRecorder(live.updates)
            try await first.next("the first result") { @Sendable in $0.totalCount == 0 }
            let task = client.object("Task")
            task["rank"] = 1
            try await task.saveEventually()
            try await first.next("the saved object") { @Sendable in $0.objectIds == [task.objectId] }
            #expect(live.objects.map(\.objectId) == [task.objectId], "the stream gives what the object shows")

            // A stream made later starts from the result shown now.
            recorder = StreamRecorder(live.updates)
            let now = try await recorder.next("the result shown now")
            #expect(now.objectIds == [task.objectId])
            first.cancel()
        }
        // The LiveQuery is gone: its streams end.
        try await recorder.waitForEnd()
        await client.shutdown()
    }

    @Test("a LiveSyncStatus's updates give its first reading, then each change")
    @MainActor
    func statusUpdates() async throws {
        let (client, _) = try offlineClient()
        try client.signInLocally("ann")
        let datastore = try await client.datastores.open(.default)
        let sync = LiveSyncStatus(datastore)
        let statuses = StreamRecorder(sync.updates)
        defer { statuses.cancel() }
        try await statuses.next("the first reading") { @Sendable in !$0.outgoing }
        let note = client.object("Note", in: .default)
        note["text"] = "queued"
        try await note.saveEventually()
        try await statuses.next("the queued change") { @Sendable in $0.outgoing }
        // The object shows it too (and keeps it: the change cannot be sent offline; other flags,
        // the failed send's error, may have moved on since).
        #expect(sync.status.outgoing)
        await client.shutdown()
    }
}
