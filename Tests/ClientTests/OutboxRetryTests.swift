import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization
import Testing
import RooftopTestSupport

@Suite("Outbox: retries, lost answers, restarts", .timeLimit(.minutes(5)))
struct OutboxRetryTests {
    private static let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(60), multiplier: 2, jitter: 0.2)

    /// A client of `server` signed in as `ann` on the test clock, with the policy above.
    private static func signedIn(_ server: RealSyncServer) async throws -> (TestClock, RooftopClient, UserInfo) {
        let clock = TestClock()
        let client = try server.client(clock: clock, retry: policy)
        let ann = try await client.signUpForTest("ann")
        return (clock, client, ann)
    }

    /// A signed-in client on the test clock whose server is offline, with one note queued; the
    /// queue's events are collected from before the note was queued.
    private func noteQueuedOffline(_ server: RealSyncServer) async throws
        -> (TestClock, RooftopClient, UserInfo, StreamRecorder<OutboxEvent>, MutationID)
    {
        let (clock, client, ann) = try await Self.signedIn(server)
        let events = StreamRecorder(client.outbox.events)
        server.offline = true
        let note = client.object("Note")
        note["n"] = 1
        let id = try #require(try await note.saveEventually())
        return (clock, client, ann, events, id)
    }

    private func pushCount(_ server: RealSyncServer) -> Int {
        server.requestLog.count { $0 == "POST /v1/push" }
    }

    @Test("passing failures retry with exponential backoff on the injected clock, with no real wait")
    func backoff() async throws {
        try await withRealServer { server in
            let (clock, client, ann, events, id) = try await noteQueuedOffline(server)
            try await events.first("retry 1") { $0.kind == .retrying(attempt: 1, after: .seconds(1)) }
            try await TestWait.until("the retry timer is set") { clock.nextDeadline == .seconds(1) }
            #expect(pushCount(server) == 1)
            let row = try #require(try client.core.store.outboxRow(id, scope: ann.objectId))
            #expect(row.state == .pending && row.attempts == 1 && row.lastError?.code == .noConnection)

            clock.advance(by: .milliseconds(999))
            #expect(pushCount(server) == 1, "not before the delay")
            clock.advance(by: .milliseconds(1))
            try await events.first("retry 2") { $0.kind == .retrying(attempt: 2, after: .seconds(2)) }
            #expect(pushCount(server) == 2)
            try await TestWait.until("the second timer is set") { clock.nextDeadline == .seconds(3) }

            server.offline = false
            clock.advance(by: .seconds(2))
            try await events.first("acknowledged") { $0.kind == .acknowledged(version: 1, merges: []) }
            #expect(pushCount(server) == 3)
            #expect(try client.outbox.status(of: id) == .acknowledged(version: 1))
        }
    }

    @Test("the delay follows the policy: doubling, capped, spread by the jitter source")
    func policyDelays() {
        #expect(Self.policy.delay(beforeAttempt: 1, random: 0.5) == .seconds(1))
        #expect(Self.policy.delay(beforeAttempt: 3, random: 0.5) == .seconds(4))
        #expect(Self.policy.delay(beforeAttempt: 30, random: 0.5) == .seconds(60))
        #expect(Self.policy.delay(beforeAttempt: 1, random: 0) == .milliseconds(800))
        #expect(Self.policy.delay(beforeAttempt: 1, random: 0.999_999) == .milliseconds(1199))
    }

    @Test("resume() sends at once, without waiting for the retry delay")
    func resume() async throws {
        try await withRealServer { server in
            let (clock, client, _, events, id) = try await noteQueuedOffline(server)
            try await events.first("a retry is scheduled") { if case .retrying = $0.kind { true } else { false } }
            server.offline = false
            client.outbox.resume()
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.status(of: id) == .acknowledged(version: 1))
            #expect(clock.now.offset == .zero, "no time passed")
        }
    }

    @Test("a lost answer is retried with the same ID and applied once")
    func lostAnswer() async throws {
        try await withRealServer { server in
            let (clock, client, _) = try await Self.signedIn(server)
            let counter = client.object("Counter", id: "c1")
            counter["n"] = 10
            try await counter.saveEventually()
            try await client.outbox.waitUntilIdle()
            let events = StreamRecorder(client.outbox.events)
            server.loseNextPushAnswers(1)
            try counter.increment("n")
            let id = try #require(try await counter.saveEventually())
            try await events.first("the answer was lost") { $0.mutationId == id && $0.kind == .retrying(attempt: 1, after: .seconds(1)) }
            #expect(try client.outbox.status(of: id) == .pending)
            #expect(try await server.object(counter.key, as: client)?.fields["n"] == 11, "applied although the answer was lost")
            clock.advance(by: .seconds(1))
            try await client.outbox.waitUntilIdle()
            let sent = server.pushes.flatMap(\.mutations).filter { $0.mutationId == id }
            #expect(sent.count == 2, "sent twice, with the same ID")
            #expect(try await server.object(counter.key, as: client)?.fields["n"] == 11, "applied once")
            #expect(counter.int("n") == 11 && counter.version == 2)
        }
    }

    @Test("after a crash mid-send, rows left `sent` are sent again at start with the same IDs: exactly once")
    func crashRecovery() async throws {
        try await withRealServer { server in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-outbox-\(UUID()).sqlite").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let key = ObjectKey(datastore: .app, className: "Counter", objectId: "c1")
            let increment: Mutation
            let ann: UserInfo
            let firstClient: RooftopClient
            do {
                let client = try server.client(storage: .file(path: path))
                ann = try await client.signUpForTest("ann")
                let counter = client.object("Counter", id: "c1")
                counter["n"] = 1
                try await counter.pin(label: "mine")
                try await counter.saveEventually()
                try await client.outbox.waitUntilIdle()
                server.pushGate.close()
                try counter.increment("n")
                let id = try #require(try await counter.saveEventually())
                try await TestWait.until("the push is on its way") { server.pushGate.waiting == 1 }
                increment = try #require(try client.core.store.outboxRow(id, scope: ann.objectId)?.mutation)
                #expect(try client.core.store.outboxRow(id, scope: ann.objectId)?.state == .sent)
                // The server applies it (the same request, from elsewhere); the process dies
                // before the answer arrives: the row is still `sent` in its file.
                try await server.push([increment], as: client)
                await server.shutdown(client)
                // The held push goes nowhere.
                server.pushGate.drop()
                server.pushGate.open()
                firstClient = client
            }
            #expect(try await server.object(key, as: firstClient)?.fields["n"] == 2)
            let reopened = try server.client(storage: .file(path: path))
            try await reopened.outbox.waitUntilIdle()
            #expect(server.pushes.last?.mutations.map(\.mutationId) == [increment.mutationId], "the same ID again")
            #expect(try await server.object(key, as: reopened)?.fields["n"] == 2, "not applied twice")
            #expect(try await server.appliedMutationCount() == 2, "the creation and the increment, once each")
            // The status, not an event: the engine starts sending as the client opens, and its event
            // may come before any recorder could subscribe.
            #expect(try reopened.outbox.status(of: increment.mutationId) == .acknowledged(version: 2))
            let stored = reopened.object("Counter", id: "c1")
            #expect(stored.int("n") == 2 && stored.version == 2, "the pinned copy has the acknowledged state")
            #expect(try stored.pinLabels() == ["mine"])
        }
    }

    @Test("a push refused as a whole is split until the culprit, sent alone, is set aside")
    func culprit() async throws {
        try await withRealServer { server in
            let client = try server.client()
            // Queued before anyone signs in: nothing is sent until a user does, so the first push
            // carries both (a round started after the first save, under load, took it alone).
            let a = client.object("Note", id: "a")
            a["n"] = 1
            let first = try #require(try await a.saveEventually())
            let b = client.object("Note", id: "b")
            b["n"] = 2
            let second = try #require(try await b.saveEventually())
            server.failNext("/v1/push", with: RooftopError(.sizeLimit, "too large"), times: 2)
            _ = try await client.signUpForTest("ann")
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.status(of: first) == .rejected(code: .sizeLimit, message: "too large"))
            #expect(try client.outbox.status(of: second) == .acknowledged(version: 1))
            #expect(try await server.object(b.key, as: client)?.fields["n"] == 2)
        }
    }

    @Test("an auth failure stalls the queue without retry timers until resumed")
    func authStall() async throws {
        try await withRealServer { server in
            let clock = TestClock()
            let client = try server.client(clock: clock)
            _ = try await client.signUpForTest("ann")
            let events = StreamRecorder(client.outbox.events)
            // Refused until the test says otherwise: the sign-up's wake may reach the engine after the
            // change's own, and any wake retries a stalled queue (refused again, it stays stalled).
            server.failNext("/v1/push", with: RooftopError(.auth, "session expired"), times: 100)
            let note = client.object("Note")
            note["n"] = 1
            let id = try #require(try await note.saveEventually())
            try await events.first("stalled") { $0.kind == .stalled(RooftopError(.auth, "session expired")) }
            // A second wake (see above) may be sending the change again right now: refused the same
            // way, it comes back to the queue, still stalled.
            try await TestWait.until("the stalled change is back in the queue") {
                try client.outbox.status(of: id) == .pending
            }
            #expect(clock.sleeperCount == 0, "no retry timer")
            server.clearFailures()
            client.outbox.resume()
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.status(of: id) == .acknowledged(version: 1))
        }
    }

    @Test("answers the store could not apply are asked again after the retry delay, without another wake")
    func storeFailureRetries() async throws {
        try await withRealServer { server in
            let (clock, client, ann) = try await Self.signedIn(server)
            // Settling an acknowledgement deletes the row: refused by the store until the trigger goes.
            try client.core.store.write(scope: ann.objectId) { transaction in
                try transaction.db.execute(
                    sql: "CREATE TEMP TRIGGER refuse_settle BEFORE DELETE ON outbox BEGIN SELECT RAISE(ABORT, 'injected'); END")
            }
            let note = client.object("Note")
            note["n"] = 1
            let id = try #require(try await note.saveEventually())
            // (The sign-up's wake may reach the engine after the save's: a second round then fails
            // the same way, and the timer is the second failure's.)
            try await TestWait.until("the answer was refused by the store and a retry timer set") {
                pushCount(server) >= 1 && clock.sleeperCount == 1
            }
            #expect(try client.outbox.status(of: id) == .sent, "the row stays sent: it goes again with its ID")
            try client.core.store.write(scope: ann.objectId) { transaction in
                try transaction.db.execute(sql: "DROP TRIGGER refuse_settle")
            }
            // Only the clock moves now. (A wake given before the save, the engine's first round or the
            // sign-up's, may still reach it after the trigger is gone and send the row first: then the
            // timer's round finds nothing due. A round already past the store when the trigger went
            // fails once more and sets a later timer: each timer set is run out in turn, so the test
            // does not depend on how far such a round had got. Either way no one else wakes the queue.)
            clock.advance(by: try #require(clock.nextDeadline) - clock.now.offset)
            try await TestWait.until("acknowledged after the retry delay") {
                if try client.outbox.status(of: id) == .acknowledged(version: 1) { return true }
                if let deadline = clock.nextDeadline { clock.advance(by: deadline - clock.now.offset) }
                return false
            }
            let sends = server.pushes.flatMap(\.mutations).count { $0.mutationId == id }
            #expect(sends >= 2, "sent again with its ID, answered from what the server recorded")
            #expect(try await server.object(note.key, as: client)?.fields["n"] == 1, "applied once")
            #expect(try await server.object(note.key, as: client)?.version == 1)
        }
    }

    @Test("push() flushes the queue with progress that adds up, and throws when the server cannot be reached")
    func pushWithProgress() async throws {
        try await withRealServer { server in
            server.pushGate.close()
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            for index in 0..<4 {
                let note = client.object("Note", id: "n\(index)")
                note["i"] = .int(Int64(index))
                try await note.saveEventually()
            }
            // The gate opens once push() has counted the queue: opened before, the engine's own
            // round (held at the gate) could answer rows before the count, and the total be less.
            let reports = ReportBox()
            let pushing = Task { try await client.sync.push { reports.append($0) } }
            try await TestWait.until("push() counted the queue") { !reports.all.isEmpty }
            server.pushGate.open()
            try await pushing.value
            let last = try #require(reports.all.last)
            #expect(last.isFinished && last.processed == 4 && last.total == 4 && last.phase == .push)
            #expect(reports.all.first?.processed == 0)
            server.offline = true
            let late = client.object("Note")
            late["i"] = 9
            try await late.saveEventually()
            await #expect(throws: RooftopError.self) { try await client.sync.push() }
        }
    }
}

/// Progress reports collected from a callback.
final class ReportBox: Sendable {
    private let reports = Mutex<[SyncProgress]>([])
    func append(_ report: SyncProgress) { reports.withLock { $0.append(report) } }
    var all: [SyncProgress] { reports.withLock { $0 } }
}
