import Foundation
import Rooftop
import RooftopShared
import Testing

/// Offline work against the real server process: changes queued while the server is down survive
/// an app restart (a new client on the same cache file), and once the server is back on the same
/// data directory and port they are applied exactly once, and another device converges.
@Suite("Client sync: offline work across restarts")
struct ClientSyncOfflineTests {
    @Test("queued saves and deletes survive an app restart while the server is down, then apply exactly once")
    func offlineQueueSurvivesRestart() async throws {
        try await withSyncHarness { harness in
            // Restarted on the same port later: one no other test's server or connection takes.
            let first = try await harness.startServerOnFixedPort()
            let port = first.port
            let api = try harness.api(first)
            let user = try await api.newUser("offline")
            let file = harness.cacheFile("device")
            let device = try await harness.client(first, file: file)
            try await device.logIn(user)

            // Three objects saved while online, and pulled into the local datastore.
            var seeded: [RooftopObject] = []
            for n in 0..<3 {
                let item = device.object("Item", in: .default)
                item["n"] = .int(Int64(n))
                item["label"] = "original"
                try await item.save()
                seeded.append(item)
            }
            #expect(try await device.sync.pull(datastore: .default) == 3)
            let (counted, edited, removed) = (seeded[0], seeded[1], seeded[2])

            // The server goes away; the app keeps working.
            await harness.stop(first)
            var queued: [MutationID] = []
            var created: [String: Int64] = [:]
            for n in 10..<14 {
                let item = device.object("Item", in: .default)
                item["n"] = .int(Int64(n))
                item["label"] = "offline"
                queued.append(try #require(try await item.saveEventually()))
                created[item.objectId] = Int64(n)
            }
            try counted.increment("n", by: 10)
            queued.append(try #require(try await counted.saveEventually()))
            edited["label"] = "edited offline"
            queued.append(try #require(try await edited.saveEventually()))
            queued.append(try await removed.deleteEventually())
            // Created and deleted while offline: the server must end up without it.
            let ephemeral = device.object("Item", in: .default)
            ephemeral["n"] = 99
            queued.append(try #require(try await ephemeral.saveEventually()))
            queued.append(try await ephemeral.deleteEventually())
            #expect(try device.outbox.hasPendingWrites)

            // The app quits and starts again, the server still down.
            await harness.shutdown(device)
            let restarted = try await harness.client(first, file: file)
            #expect(restarted.currentUser?.objectId == user.id)
            #expect(try restarted.outbox.hasPendingWrites)
            for id in queued {
                let status = try restarted.outbox.status(of: id)
                #expect(status == .pending || status == .sent, "\(id) is still queued, not \(String(describing: status))")
            }
            let expectedIds = Set(created.keys).union([counted.objectId, edited.objectId])
            #expect(try await restarted.localIds("Item", in: .default) == expectedIds)
            let local = restarted.query("Item", in: .default).fromLocalDatastore()
            #expect(try await local.getObject(counted.objectId).int("n") == 10)
            #expect(try await local.getObject(edited.objectId).string("label") == "edited offline")
            for (id, n) in created { #expect(try await local.getObject(id).int("n") == n) }
            await #expect(throws: RooftopError.self) { try await local.getObject(removed.objectId) }
            await #expect(throws: RooftopError.self) { try await local.getObject(ephemeral.objectId) }
            #expect(try await restarted.query("Item", in: .default).fromLocalDatastore().where(Field("label") == "offline").count() == 4)

            // The server comes back on the same data directory and port; the queue drains.
            let second = try await harness.startServer(dataDirectory: first.dataDirectory, port: port)
            #expect(second.port == port)
            try await withDeadline(.seconds(60), "the offline queue draining") {
                try await restarted.outbox.waitUntilIdle()
            }
            #expect(try restarted.outbox.rejected().isEmpty)
            #expect(!(try restarted.outbox.hasPendingWrites))
            for id in queued {
                let status = try restarted.outbox.status(of: id)
                guard case .acknowledged? = status else {
                    Issue.record("\(id) should be acknowledged, is \(String(describing: status))")
                    continue
                }
            }

            // The server applied each change exactly once.
            let admin = try harness.api(second)
            let stored = try await admin.allObjects(.default, className: "Item", token: user.token)
            #expect(Set(stored.keys) == expectedIds)
            #expect(stored[counted.objectId]?.fields["n"] == .int(10), "the increment applied once")
            #expect(stored[counted.objectId]?.version == 2, "one update after the create")
            #expect(stored[edited.objectId]?.fields["label"] == .string("edited offline"))
            #expect(stored[edited.objectId]?.version == 2)
            for (id, n) in created {
                #expect(stored[id]?.fields == ["n": .int(n), "label": "offline"])
                #expect(stored[id]?.version == 1, "created once")
            }
            #expect(try await admin.object(.default, className: "Item", objectId: removed.objectId, token: user.token) == nil)
            #expect(try await admin.object(.default, className: "Item", objectId: ephemeral.objectId, token: user.token) == nil)
            #expect(try await admin.count(.default, className: "Item", token: user.token) == 6)

            // Another device of the same user pulls and converges on the same state.
            let other = try await harness.client(second, file: harness.cacheFile("other"))
            try await other.logIn(user)
            try await other.sync.pull(datastore: .default)
            #expect(try await other.localIds("Item", in: .default) == expectedIds)
            for id in expectedIds {
                let mine = try await restarted.query("Item", in: .default).fromLocalDatastore().getObject(id)
                let theirs = try await other.query("Item", in: .default).fromLocalDatastore().getObject(id)
                #expect(mine.snapshot.fields == theirs.snapshot.fields, "\(id)")
                #expect(theirs.snapshot.fields == stored[id]?.fields)
                #expect(mine.version == stored[id]?.version, "the reopened device holds the server's version of \(id)")
            }
        }
    }
}
