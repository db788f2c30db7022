@testable import Rooftop
import Foundation
import GRDB
import RooftopShared
import Testing
import RooftopTestSupport

@Suite("Rebase of queued changes over pulled ones", .timeLimit(.minutes(5)))
struct RebaseTests {
    /// A client signed in as `ann` with `Score/score0` pulled at `base` fields, and the offline
    /// queue busy: a push of another object waits at the gate in front of the server, so that the
    /// score's changes queued now stay pending, never sent, until the test opens the gate.
    private func setUp(
        _ server: RealSyncServer, base: [String: Value], clock: TestClock = TestClock(), storage: LocalStorage = .inMemory
    ) async throws -> (RooftopClient, RooftopObject, UserInfo) {
        let client = try server.client(clock: clock, storage: storage)
        let ann = try await client.signUpForTest("ann")
        try await server.seed(1, className: "Score", as: client) { _ in base }
        try await client.sync.pull(datastore: .default)
        server.pushGate.close()
        let blocker = client.object("Note", id: "blocker", in: .default)
        blocker["busy"] = true
        try await blocker.saveEventually()
        try await TestWait.until("the queue is busy") { server.pushGate.waiting == 1 }
        return (client, client.object("Score", id: "score0", in: .default), ann)
    }

    @Test("sum counters incremented on two clients converge, with the decision observable", arguments: [false, true])
    func sumCounters(rebaseFirst: Bool) async throws {
        try await withRealServer { server in
            try await server.setRules(["count": .sum], for: "Score")
            let (client, score, ann) = try await setUp(server, base: ["count": 10])
            let decisions = StreamRecorder(client.sync.mergeDecisions)
            try score.increment("count", by: 5)
            let queued = try #require(try await score.saveEventually())
            // Another client adds 1 meanwhile.
            try await server.update(score.key, as: client, [FieldUpdate("count", .increment(1))])
            if rebaseFirst {
                // The pull comes before the push: the client rebases its queued increment.
                try await client.sync.pull(datastore: .default)
                #expect(score.int("count") == 16, "the local view is the merged value")
                let decision = try await decisions.first("a rebase decision") { $0.source == .rebase }
                #expect(decision.decision.rule == .sum && decision.decision.result == 16)
                #expect(try client.core.store.outboxRow(queued, scope: ann.objectId)?.mutation.baseVersion == 2)
            }
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            #expect(try await server.object(score.key, as: client)?.fields["count"] == 16)
            try await client.sync.pull(datastore: .default)
            #expect(score.int("count") == 16)
            if !rebaseFirst {
                let decision = try await decisions.first("the server's decision") { $0.source == .push(queued) }
                #expect(decision.decision.rule == .sum && decision.key == score.key)
            }
        }
    }

    @Test("a sum counter incremented offline on two devices converges to the total on both")
    func twoDevices() async throws {
        try await withRealServer { server in
            try await server.setRules(["count": .sum], for: "Score")
            let phone = try server.client()
            _ = try await phone.signUpForTest("ann")
            let tablet = try server.client()
            try await tablet.logIn(username: "ann", password: "secret-password")
            let key = try #require(try await server.seed(1, className: "Score", as: phone) { _ in ["count": 10] }.first)
            try await phone.sync.pull(datastore: .default)
            try await tablet.sync.pull(datastore: .default)
            server.offline = true
            let onPhone = phone.object("Score", id: key.objectId, in: .default)
            let onTablet = tablet.object("Score", id: key.objectId, in: .default)
            try onPhone.increment("count", by: 1)
            try await onPhone.saveEventually()
            try onTablet.increment("count", by: 5)
            try await onTablet.saveEventually()
            #expect(onPhone.int("count") == 11 && onTablet.int("count") == 15)
            server.offline = false
            phone.outbox.resume()
            tablet.outbox.resume()
            try await phone.outbox.waitUntilIdle()
            try await tablet.outbox.waitUntilIdle()
            try await phone.sync.pull(datastore: .default)
            try await tablet.sync.pull(datastore: .default)
            #expect(try await server.object(key, as: phone)?.fields["count"] == 16)
            #expect(onPhone.int("count") == 16 && onTablet.int("count") == 16)
        }
    }

    @Test("each rule decides a field set on both sides", arguments: [
        (MergeRule.remote, Value.int(20)), (.local, .int(15)), (.max, .int(20)), (.min, .int(15)), (.sum, .int(25)),
    ])
    func rules(rule: MergeRule, expected: Value) async throws {
        try await withRealServer { server in
            try await server.setRules(["best": rule], for: "Score")
            let (client, score, _) = try await setUp(server, base: ["best": 10])
            score["best"] = 15
            try await score.saveEventually()
            try await server.update(score.key, as: client, [FieldUpdate("best", .set(20))])
            let decisions = StreamRecorder(client.sync.mergeDecisions)
            try await client.sync.pull(datastore: .default)
            #expect(score["best"] == expected, "local view after the rebase")
            let decision = try await decisions.first("the decision") { _ in true }.decision
            #expect(decision == MergeDecision(
                field: "best", baseValue: 10, localValue: 15, remoteValue: 20, rule: rule, result: expected, resolution: .rule))
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            #expect(try await server.object(score.key, as: client)?.fields["best"] == expected, "the server agrees")
        }
    }

    @Test("an object's queued changes fold into its first; the folded changes share its answer")
    func folding() async throws {
        try await withRealServer { server in
            let (client, score, ann, first, second) = try await foldTwoIncrements(server)
            let rows = try client.core.store.queued(for: score.key, scope: ann.objectId)
            #expect(rows.map(\.mutation.mutationId) == [first])
            #expect(rows.first?.mutation.change == .update([FieldUpdate("count", .increment(1)), FieldUpdate("count", .increment(2))]))
            #expect(try client.outbox.status(of: second) == .pending, "a folded change reads as its survivor")
            #expect(score.int("count") == 13)
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.status(of: second) == .acknowledged(version: 3))
            #expect(try await server.object(score.key, as: client)?.fields["count"] == 13)
        }
    }

    /// Two increments of a score queued (the push held back), then a pull over another device's
    /// increment: the second folds into the first.
    private func foldTwoIncrements(
        _ server: RealSyncServer, clock: TestClock = TestClock(), storage: LocalStorage = .inMemory
    ) async throws -> (RooftopClient, RooftopObject, UserInfo, MutationID, MutationID) {
        try await server.setRules(["count": .sum], for: "Score")
        let (client, score, ann) = try await setUp(server, base: ["count": 0], clock: clock, storage: storage)
        try score.increment("count", by: 1)
        let first = try #require(try await score.saveEventually())
        try score.increment("count", by: 2)
        let second = try #require(try await score.saveEventually())
        try await server.update(score.key, as: client, [FieldUpdate("count", .increment(10))])
        try await client.sync.pull(datastore: .default)
        return (client, score, ann, first, second)
    }

    @Test("a settle the store could not commit, settled again, still tells the changes folded into the answered one")
    func foldedAfterFailedSettle() async throws {
        try await withRealServer { server in
            let clock = TestClock()
            let (client, _, ann, first, second) = try await foldTwoIncrements(server, clock: clock)
            let events = StreamRecorder(client.outbox.events)
            // Every settle's delete is refused until the trigger goes: the answers are not applied.
            try client.core.store.write(scope: ann.objectId) { transaction in
                try transaction.db.execute(
                    sql: "CREATE TEMP TRIGGER refuse_settle BEFORE DELETE ON outbox BEGIN SELECT RAISE(ABORT, 'injected'); END")
            }
            server.pushGate.open()
            try await TestWait.until("a settle failed and a retry timer is set") {
                server.pushes.contains { $0.mutations.contains { $0.mutationId == first } } && clock.sleeperCount == 1
            }
            try client.core.store.write(scope: ann.objectId) { transaction in
                try transaction.db.execute(sql: "DROP TRIGGER refuse_settle")
            }
            // The engine may have failed again (woken meanwhile) and set a later timer: each timer
            // set is run out, until a retry settles the answers.
            try await TestWait.until("a retry settles the answers") {
                if let deadline = clock.nextDeadline { clock.advance(by: deadline - clock.now.offset) }
                return try !client.outbox.hasPendingWrites
            }
            try await client.outbox.waitUntilIdle()
            try await events.first("the folded change's acknowledgement") {
                $0.mutationId == second && $0.kind == .acknowledged(version: 3, merges: [])
            }
            #expect(try client.outbox.status(of: second) == .acknowledged(version: 3))
        }
    }

    @Test("a refused change lists the changes folded into it, which read as refused with it")
    func foldedRefusal() async throws {
        try await withRealServer { server in
            let (client, score, ann, first, second) = try await foldTwoIncrements(server)
            #expect(try client.core.store.queued(for: score.key, scope: ann.objectId).map(\.mutation.mutationId) == [first])
            try await server.refuse("Score")
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.status(of: second) == client.outbox.status(of: first))
            let refused = try client.outbox.rejected()
            #expect(refused.map(\.mutationId) == [first])
            #expect(refused.first?.foldedMutationIds == [second], "the folded change is found with the refusal it shares")
            #expect(refused.first?.error.code == .disallowed)

            // Requeued, the refused change's IDs go with the new one: pending with it, then
            // acknowledged with it, each told once.
            try await server.refuse("Score", false)
            server.pushGate.close()
            let events = StreamRecorder(client.outbox.events)
            let again = try client.outbox.requeue(try #require(refused.first))
            #expect(try client.core.store.outboxRow(again, scope: ann.objectId)?.folded == [first, second])
            for id in [first, second] {
                let status = try client.outbox.status(of: id)
                #expect(status == .pending || status == .sent, "read through the requeued change: \(String(describing: status))")
            }
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            let version = try #require(try await server.object(score.key, as: client)?.version)
            for id in [again, first, second] {
                #expect(try client.outbox.status(of: id) == .acknowledged(version: version))
                try await events.first("the requeued change's answer") {
                    $0.mutationId == id && $0.kind == .acknowledged(version: version, merges: [])
                }
                let told = events.elements.filter { $0.mutationId == id && $0.kind == .acknowledged(version: version, merges: []) }
                #expect(told.count == 1, "told once: \(events.elements)")
            }
        }
    }

    /// When the answer to a change that others were folded into comes, against a restart of the app.
    enum FoldedAnswer: String, CaseIterable, Sendable {
        /// Refused before the restart; the status is asked after it.
        case refusedBefore
        /// Refused after the restart (the fold was made before it).
        case refusedAfter
        /// Acknowledged after the restart.
        case acknowledgedAfter
    }

    @Test(
        "a change folded into another shares its answer across a restart: its status, and the refusal that lists it",
        arguments: FoldedAnswer.allCases)
    func foldsOutliveRestarts(answer: FoldedAnswer) async throws {
        try await withRealServer { server in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-fold-\(UUID()).sqlite").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let (client, score, ann, first, second) = try await foldTwoIncrements(server, storage: .file(path: path))
            // The rebase folded the second change into the first, and the first row lists it.
            #expect(try client.core.store.outboxRow(first, scope: ann.objectId)?.folded == [second])
            #expect(try client.core.store.outboxRow(second, scope: ann.objectId) == nil)
            // A third change, folded by a second rebase: the first row lists both.
            try score.increment("count", by: 4)
            let third = try #require(try await score.saveEventually())
            try await server.update(score.key, as: client, [FieldUpdate("count", .increment(100))])
            try await client.sync.pull(datastore: .default)
            #expect(try client.core.store.outboxRow(first, scope: ann.objectId)?.folded == [second, third])
            if answer != .acknowledgedAfter { try await server.refuse("Score") }
            // The answer's events, from the client that hears the answer.
            var events = StreamRecorder(client.outbox.events)
            if answer == .refusedBefore {
                server.pushGate.open()
                try await client.outbox.waitUntilIdle()
                server.pushGate.close()
            }
            await server.shutdown(client)
            server.pushGate.drop()
            // Reopened: the ledger in memory is new; what the store kept is all it knows. Its
            // engine starts at once, and its first push waits at the closed gate.
            let reopened = try server.client(storage: .file(path: path))
            if answer != .refusedBefore { events = StreamRecorder(reopened.outbox.events) }
            if answer != .refusedBefore {
                try await TestWait.until("the first change is on its way again") { server.pushGate.waiting == 1 }
                for folded in [second, third] {
                    let (status, firstStatus) = (try reopened.outbox.status(of: folded), try reopened.outbox.status(of: first))
                    #expect(status != nil && status == firstStatus, "read through the row it was folded into")
                }
                server.pushGate.open()
            } else {
                server.pushGate.open()
            }
            try await reopened.outbox.waitUntilIdle()
            // Each folded change is told its answer, once.
            for folded in [second, third] {
                let told = try await events.first("a folded change's answer") { $0.mutationId == folded }
                switch (answer, told.kind) {
                case (.acknowledgedAfter, .acknowledged(version: 4, merges: [])): break
                case (.refusedBefore, .rejected(let error)), (.refusedAfter, .rejected(let error)):
                    #expect(error.code == .disallowed)
                default: Issue.record("a folded change was told \(told.kind)")
                }
                #expect(events.elements.filter { $0.mutationId == folded }.count == 1, "told once: \(events.elements)")
            }
            switch answer {
            case .refusedBefore, .refusedAfter:
                let refused = try reopened.outbox.rejected()
                #expect(refused.map(\.mutationId) == [first])
                #expect(
                    refused.first?.foldedMutationIds == [second, third], "the refusal lists the changes folded before the restart")
                for folded in [second, third] {
                    #expect(try reopened.outbox.status(of: folded) == reopened.outbox.status(of: first))
                    #expect(try {
                        if case .rejected(.disallowed, _)? = try reopened.outbox.status(of: folded) { return true }
                        return false
                    }())
                }
            case .acknowledgedAfter:
                #expect(try reopened.outbox.rejected().isEmpty)
                for id in [first, second, third] { #expect(try reopened.outbox.status(of: id) == .acknowledged(version: 4)) }
                #expect(try await server.object(score.key, as: reopened)?.fields["count"] == 117)
            }
        }
    }

    @Test("a rebase that settles rows takes the folds each row kept (made before a restart): they are acknowledged with it")
    func settledRowsCarryKeptFolds() throws {
        let store = try LocalStore(.inMemory)
        defer { store.close() }
        let key = ObjectKey(datastore: .default, className: "Score", objectId: "s1")
        let (first, second, earlier) = (MutationID.generate(), MutationID.generate(), MutationID.generate())
        let mutations = [first, second].map { id in
            Mutation(
                mutationId: id, datastore: key.datastore, className: key.className, objectId: key.objectId,
                baseVersion: 1, change: .update([FieldUpdate("count", .increment(1))]))
        }
        try store.write(scope: "u1") { transaction in
            for mutation in mutations { try transaction.enqueue(mutation) }
            // What an earlier rebase left in the first row, in a process gone since.
            try transaction.setFolded(first, [earlier])
        }
        // Every queued change lost to a remote delete: nothing is left to send.
        let rebase = Rebase(
            key: key, rowIds: [first, second], result: ObjectMerge.Result(change: nil, decisions: []), version: 3)
        let outcome = try store.write(scope: "u1") { transaction in try rebase.apply(in: transaction) }
        guard case .settled(let ids, let version, let folded)? = outcome else {
            Issue.record("the rebase did not settle the rows: \(String(describing: outcome))")
            return
        }
        #expect(ids == [first, second] && version == 3)
        #expect(folded == [first: [earlier]], "the first row's kept fold goes with its acknowledgement")
        #expect(try store.outbox(scope: "u1").isEmpty)
    }

    @Test("a remote delete settles a change others were folded into: each is acknowledged with it and told once")
    func remoteDeleteSettlesFolds() async throws {
        try await withRealServer { server in
            let (client, score, ann, first, second) = try await foldTwoIncrements(server)
            #expect(try client.core.store.outboxRow(first, scope: ann.objectId)?.folded == [second])
            let events = StreamRecorder(client.outbox.events)
            try await server.delete(score.key, as: client)
            try await client.sync.pull(datastore: .default)
            #expect(try client.core.store.queued(for: score.key, scope: ann.objectId).isEmpty)
            let version = try #require({ () -> Int64? in
                if case .acknowledged(let version)? = try client.outbox.status(of: first) { return version }
                return nil
            }(), "the surviving change is acknowledged by the delete")
            #expect(try client.outbox.status(of: second) == .acknowledged(version: version), "the folded change with it")
            for id in [first, second] {
                let told = try await events.first("an acknowledgement") { $0.mutationId == id && $0.kind != .queued }
                guard case .acknowledged(version, _) = told.kind else {
                    Issue.record("\(id) was told \(told.kind)")
                    continue
                }
                let all = events.elements.filter { $0.mutationId == id && $0.kind != .queued }
                #expect(all.count == 1, "told once: \(all)")
            }
            #expect(score.isDeleted)
        }
    }

    @Test("a remote delete wins over queued updates: they are settled, the object purged, the decision recorded")
    func remoteDelete() async throws {
        try await withRealServer { server in
            let (client, score, ann) = try await setUp(server, base: ["count": 1])
            let events = StreamRecorder(client.outbox.events)
            score["count"] = 2
            let queued = try #require(try await score.saveEventually())
            try await server.delete(score.key, as: client)
            let decisions = StreamRecorder(client.sync.mergeDecisions)
            try await client.sync.pull(datastore: .default)
            #expect(try client.core.store.queued(for: score.key, scope: ann.objectId).isEmpty)
            #expect(try client.outbox.status(of: queued) == .acknowledged(version: 2))
            #expect(score.isDeleted && score["count"] == nil)
            let decision = try await decisions.first("objectDeleted") { _ in true }.decision
            #expect(decision.resolution == .objectDeleted && decision.field == "count" && decision.result == nil)
            try await events.first("acknowledged locally") { $0.mutationId == queued && $0.kind != .queued }
            let pushed = server.pushes.count
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            #expect(server.pushes.count == pushed + 1, "only the blocker's push went; nothing of the score was left to send")
            #expect(!server.pushes.flatMap(\.mutations).contains { $0.mutationId == queued })
        }
    }

    @Test("a pulled page that rewrites queued changes commits waiting for the disk")
    func rebasingPageSynced() async throws {
        try await withRealServer { server in
            let (client, score, ann) = try await setUp(server, base: ["count": 1])
            score["count"] = 2
            let queued = try #require(try await score.saveEventually())
            try await server.delete(score.key, as: client)
            let statements = try WriterStatements(client.core.store, scope: ann.objectId)
            try await client.sync.pull(datastore: .default)
            // The rebase settled the queued change and the page purged the object, in a commit that
            // waited for the disk: the writer was never set to `NORMAL`.
            #expect(try client.core.store.queued(for: score.key, scope: ann.objectId).isEmpty)
            #expect(try client.outbox.status(of: queued) == .acknowledged(version: 2))
            let all = statements.all
            #expect(all.contains { $0.hasPrefix("DELETE FROM objects") }, "\(all)")
            #expect(!all.contains("PRAGMA synchronous = NORMAL"), "\(all)")
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
        }
    }

    @Test("a rebase settled in a page's first transaction is told even when a later transaction of the page fails")
    func settledBeforeAFailedSlice() async throws {
        try await withRealServer { server in
            let (client, score, ann) = try await setUp(server, base: ["count": 1])
            let events = StreamRecorder(client.outbox.events)
            score["count"] = 2
            let queued = try #require(try await score.saveEventually())
            let store = client.core.store
            // The score's tombstone settles its queued change in the first slice; the page goes on
            // past it in another transaction (a write waits), which fails: the table of checkpoints
            // is gone by then.
            let others = (0..<SyncEngine.sliceSize + 5).map { index in
                PullChange.upsert(
                    ObjectSnapshot(className: "Item", objectId: "i\(index)", datastore: .default, fields: ["i": .int(Int64(index))], version: 1))
            }
            let page = PullResponse(
                changes: [.tombstone(className: "Score", objectId: score.objectId, version: 2)] + others,
                checkpoint: Checkpoint("c:late"), hasMore: false)
            let drop = WaitingWrite(store) {
                _ = try? store.write(scope: ann.objectId) { transaction in try transaction.db.execute(sql: "DROP TABLE checkpoints") }
            }
            await #expect(throws: RooftopError.self) {
                try await client.sync.apply(
                    page, datastore: .default, scope: .everything, checkpoint: page.checkpoint, owner: ann.objectId,
                    onChange: drop.observer)
            }
            #expect(drop.ran.wait(timeout: .now() + 10) == .success)
            #expect(try store.queued(for: score.key, scope: ann.objectId).isEmpty, "the first transaction settled it")
            let told = try await events.first("its acknowledgement is told") { event in
                guard event.mutationId == queued, case .acknowledged(version: 2, _) = event.kind else { return false }
                return true
            }
            if case .acknowledged(_, let merges) = told.kind {
                #expect(merges.map(\.resolution) == [.objectDeleted], "with the delete's decision")
            }
            #expect(try client.outbox.status(of: queued) == .acknowledged(version: 2))
        }
    }

    @Test("changes that may have reached the server are not rewritten: the server merges them")
    func maybeDelivered() async throws {
        try await withRealServer { server in
            try await server.setRules(["count": .sum], for: "Score")
            let (client, score, ann) = try await setUp(server, base: ["count": 0])
            server.pushGate.open()
            try await client.outbox.waitUntilIdle()
            let events = StreamRecorder(client.outbox.events)
            server.loseNextPushAnswers(1)
            try score.increment("count", by: 1)
            let queued = try #require(try await score.saveEventually())
            try await events.first("the answer was lost") { if case .retrying = $0.kind { $0.mutationId == queued } else { false } }
            // The server applied it (version 2); another client adds 10 (version 3).
            try await server.update(score.key, as: client, [FieldUpdate("count", .increment(10))])
            try await client.sync.pull(datastore: .default)
            let row = try #require(try client.core.store.outboxRow(queued, scope: ann.objectId))
            #expect(row.mutation.baseVersion == 1 && row.mutation.change == .update([FieldUpdate("count", .increment(1))]))
            client.outbox.resume()
            try await client.outbox.waitUntilIdle()
            #expect(try await server.object(score.key, as: client)?.fields["count"] == 11, "applied once")
            try await client.sync.pull(datastore: .default)
            #expect(score.int("count") == 11)
        }
    }
}
