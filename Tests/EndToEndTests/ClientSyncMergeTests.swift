import Foundation
@testable import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

/// Merge decisions observable end to end: two devices of one user edit the same field of the
/// same object concurrently, and the device whose change comes second sees the decision on
/// ``SyncEngine/mergeDecisions`` — taken by the server when its queued change is pushed, or by the
/// client itself when a pull arrives while its change is still queued (a rebase).
///
/// The client rebases only changes that never went out (a change whose push failed may have
/// reached the server, which merges it then): to hold a change queued without an attempt, the
/// phone's queue is kept busy by a push of another object waiting in flight.
@Suite("Client sync: merge decisions", .sharedServer())
struct ClientSyncMergeTests {
    @Test("a queued change pushed after a concurrent one gets the server's decision (default rule: remote)")
    func serverDecision() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Doc")
        try await withSyncHarness { harness in
            let (user, _, phone, _, doc, onPhone) = try await Self.devices(
                harness, server, api, user: "merger", className: className, fields: ["title": "draft", "pages": 1])

            doc["title"] = "from laptop"
            try await doc.save()
            let decisions = StreamRecorder(phone.sync.mergeDecisions)
            onPhone["title"] = "from phone"
            onPhone["pages"] = 2
            let id = try #require(try await onPhone.saveEventually())
            try await withDeadline(.seconds(30), "the phone's queue draining") { try await phone.outbox.waitUntilIdle() }

            let event = try await decisions.first("the server's decision") { $0.decision.field == "title" }
            #expect(event.source == .push(id))
            #expect(event.key == onPhone.key)
            #expect(event.decision == MergeDecision(
                field: "title", baseValue: "draft", localValue: "from phone", remoteValue: "from laptop", rule: .remote,
                result: "from laptop", resolution: .rule))
            #expect(!decisions.elements.contains { $0.decision.field == "pages" }, "an edit on one side only is no conflict")
            #expect(onPhone.string("title") == "from laptop" && onPhone.int("pages") == 2)
            guard case .acknowledged(let version)? = try phone.outbox.status(of: id) else {
                Issue.record("the change should be acknowledged: \(String(describing: try phone.outbox.status(of: id)))")
                return
            }
            let stored = try await api.object(.default, className: className, objectId: doc.objectId, token: user.token)
            #expect(stored?.version == version)
            #expect(stored?.fields["title"] == "from laptop" && stored?.fields["pages"] == 2)
        }
    }

    @Test("a pull over a still-queued change rebases it on the client, with the class's rule, and the server agrees")
    func rebaseDecision() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Doc")
        try await api.setClass(className, rules: ["title": .local, "best": .max])
        try await withSyncHarness { harness in
            let (user, laptop, phone, gate, doc, onPhone) = try await Self.devices(
                harness, server, api, user: "rebaser", className: className, fields: ["title": "draft", "best": 10])

            // A slow push of another object is in flight on the phone: its queue sends one push
            // at a time, so the phone's edit of the document stays queued, never sent.
            gate.holdPushes()
            let blocker = phone.object(className, in: .default)
            blocker["title"] = "slow"
            try await blocker.saveEventually()
            try await TestWait.until("the blocker's push in flight") { gate.heldPushes == 1 }
            onPhone["title"] = "from phone"
            onPhone["best"] = 15
            let id = try #require(try await onPhone.saveEventually())
            doc["title"] = "from laptop"
            doc["best"] = 20
            try await doc.save()

            let decisions = StreamRecorder(phone.sync.mergeDecisions)
            try await phone.sync.pull(datastore: .default)
            let title = try await decisions.first("the title decision") { $0.decision.field == "title" }
            let best = try await decisions.first("the best decision") { $0.decision.field == "best" }
            #expect(title.source == .rebase && best.source == .rebase)
            #expect(title.decision == MergeDecision(
                field: "title", baseValue: "draft", localValue: "from phone", remoteValue: "from laptop", rule: .local,
                result: "from phone", resolution: .rule))
            #expect(best.decision == MergeDecision(
                field: "best", baseValue: 10, localValue: 15, remoteValue: 20, rule: .max, result: 20, resolution: .rule))
            #expect(onPhone.string("title") == "from phone" && onPhone.int("best") == 20, "the local view is the merge")
            #expect(try phone.outbox.hasPendingWrites, "the rebased change is still queued")

            // Once through, the rebased change applies without a second conflict.
            gate.releasePushes()
            try await withDeadline(.seconds(30), "the phone's queue draining") { try await phone.outbox.waitUntilIdle() }
            #expect(!(try phone.outbox.hasPendingWrites))
            #expect(decisions.elements.allSatisfy { $0.source == .rebase }, "the server took no decision: \(decisions.elements)")
            #expect(decisions.elements.count == 2)
            let status = try phone.outbox.status(of: id)
            guard case .acknowledged? = status else {
                Issue.record("the change should be acknowledged, is \(String(describing: status))")
                return
            }
            try await laptop.sync.pull(datastore: .default)
            #expect(doc.string("title") == "from phone" && doc.int("best") == 20)
            let stored = try await api.object(.default, className: className, objectId: doc.objectId, token: user.token)
            #expect(stored?.fields["title"] == "from phone" && stored?.fields["best"] == 20)
        }
    }

    @Test("changes queued while an update that lost to a delete was in flight lose too: no re-creation")
    func changesQueuedBehindAnUpdateThatLostToADelete() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Doc")
        try await withSyncHarness { harness in
            let (user, _, phone, gate, doc, onPhone) = try await Self.devices(
                harness, server, api, user: "behind-delete", className: className, fields: ["title": "draft"])
            try await doc.delete()

            // The phone's first edit goes out and waits in flight; the second is queued behind it.
            gate.holdPushes()
            onPhone["title"] = "edited on the phone"
            let first = try #require(try await onPhone.saveEventually())
            try await TestWait.until("the first edit's push in flight") { gate.heldPushes == 1 }
            onPhone["pages"] = 2
            let second = try #require(try await onPhone.saveEventually())
            // The first edit is answered (it lost to the delete: no object); the second goes out
            // and waits; a third is made meanwhile, when the phone has no server state left.
            gate.releaseHeldPushes()
            try await TestWait.until("the first edit answered, the second in flight") {
                gate.heldPushes == 1 && (try? phone.outbox.status(of: first)).map { if case .acknowledged = $0 { true } else { false } } == true
            }
            onPhone["tag"] = "late"
            let third = try #require(try await onPhone.saveEventually())
            gate.releasePushes()
            try await withDeadline(.seconds(30), "the phone's queue draining") { try await phone.outbox.waitUntilIdle() }

            let stored = try await api.object(.default, className: className, objectId: doc.objectId, token: user.token)
            #expect(stored == nil, "the delete wins over every edit made before it: \(String(describing: stored))")
            for id in [first, second, third] {
                let status = try phone.outbox.status(of: id)
                guard case .acknowledged(let version)? = status else {
                    Issue.record("\(id) should be acknowledged (as lost to the delete), is \(String(describing: status))")
                    continue
                }
                #expect(version == 2, "answered at the tombstone's version")
            }
            try await phone.sync.pull(datastore: .default)
            let local = try await phone.query(className, in: .default).fromLocalDatastore().find()
            #expect(local.objects.isEmpty, "the phone keeps no copy: \(local.objects.map(\.snapshot))")
        }
    }

    @Test(
        "a change made on a creation whose answer was lost loses to the same user's delete from another device",
        arguments: [false, true])
    func changeOnALostCreationAnswerLosesToOwnDeleteElsewhere(pullsTheDeleteFirst: Bool) async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Doc")
        try await withSyncHarness { harness in
            let user = try await api.newUser("lost-create")
            let laptop = try await harness.client(server, file: harness.cacheFile("laptop"))
            let (phone, gate) = try harness.controlledClient(server, file: harness.cacheFile("phone"))
            try await laptop.logIn(user)
            try await phone.logIn(user)

            // The phone's creation reaches the server, but its answer is lost; its retries wait.
            gate.losesPushAnswers = true
            let doc = phone.object(className, in: .default)
            doc["title"] = "draft"
            let created = try #require(try await doc.saveEventually())
            try await TestWait.until("the creation on the server") {
                try await api.object(.default, className: className, objectId: doc.objectId, token: user.token) != nil
            }
            gate.holdPushes()
            try await TestWait.until("the creation's retry held") { gate.heldPushes >= 1 }
            // The same user deletes it on the laptop; the phone, not knowing its creation's
            // version yet, edits it: the edit is queued with no base version, behind the creation.
            try await laptop.sync.pull(datastore: .default)
            let onLaptop = try await laptop.query(className, in: .default).fromLocalDatastore().getObject(doc.objectId)
            try await onLaptop.delete()
            doc["pages"] = 2
            let edit = try #require(try await doc.saveEventually())
            if pullsTheDeleteFirst {
                // The phone hears of the delete before the retry's answer: its copy goes, the
                // queued changes stay (they may have reached the server).
                try await phone.sync.pull(datastore: .default)
            }
            // The retry (the creation alone) is answered at version 1 with no object: the edit,
            // sent next on its own, was made on the creation and loses to the delete as well.
            gate.losesPushAnswers = false
            gate.releasePushes()
            try await withDeadline(.seconds(30), "the phone's queue draining") { try await phone.outbox.waitUntilIdle() }

            let stored = try await api.object(.default, className: className, objectId: doc.objectId, token: user.token)
            #expect(stored == nil, "the delete wins over the edit made before it: \(String(describing: stored))")
            #expect(try phone.outbox.status(of: created) == .acknowledged(version: 1))
            #expect(try phone.outbox.status(of: edit) == .acknowledged(version: 2), "answered at the tombstone's version")
        }
    }

    @Test("a change queued while an earlier one was in flight merges with what others committed in between")
    func changeQueuedDuringAPushMergesWithConcurrentOnes() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Doc")
        try await api.setClass(className, rules: ["title": .remote, "best": .max])
        try await withSyncHarness { harness in
            let (user, _, phone, gate, doc, onPhone) = try await Self.devices(
                harness, server, api, user: "in-flight", className: className, fields: ["title": "draft", "best": 10])

            // The phone's first edit goes out and waits before it reaches the server.
            gate.holdPushes()
            onPhone["pages"] = 2
            let first = try #require(try await onPhone.saveEventually())
            try await TestWait.until("the first edit's push in flight") { gate.heldPushes == 1 }
            // The laptop's edit lands first; the phone, not knowing it, edits the same fields.
            doc["title"] = "from laptop"
            doc["best"] = 20
            try await doc.save()
            onPhone["title"] = "from phone"
            onPhone["best"] = 15
            let second = try #require(try await onPhone.saveEventually())
            let decisions = StreamRecorder(phone.sync.mergeDecisions)
            gate.releasePushes()
            try await withDeadline(.seconds(30), "the phone's queue draining") { try await phone.outbox.waitUntilIdle() }

            // The second edit was made on the phone's first, not on the laptop's: it is concurrent
            // with the laptop's, and the rules decide (`remote` keeps the laptop's title, `max` 20).
            // The first's answer showed the laptop's write in between: both went again together,
            // and the server merged the second as a chain after the first.
            let stored = try await api.object(.default, className: className, objectId: doc.objectId, token: user.token)
            #expect(stored?.fields["title"] == "from laptop", "\(String(describing: stored?.fields))")
            #expect(stored?.fields["best"] == 20)
            #expect(stored?.fields["pages"] == 2)
            #expect(stored?.version == 3, "one write each: the first was answered again, not applied twice")
            for id in [first, second] {
                let status = try phone.outbox.status(of: id)
                guard case .acknowledged? = status else {
                    Issue.record("\(id) should be acknowledged, is \(String(describing: status))")
                    continue
                }
            }
            let title = try await decisions.first("the title decision") { $0.decision.field == "title" }
            #expect(title.decision.result == "from laptop" && title.decision.rule == .remote)
            #expect(title.source == .push(second))
            try await phone.sync.pull(datastore: .default)
            #expect(onPhone.string("title") == "from laptop" && onPhone.int("best") == 20)
        }
    }

    /// A new user's laptop and phone (the phone's pushes under the test's control), and a document
    /// the laptop saved with `fields` and the phone pulled: the laptop's instance and the phone's.
    private static func devices(
        _ harness: ClientSyncHarness, _ server: ServerProcess, _ api: APIClient, user name: String, className: String,
        fields: [String: Value]
    ) async throws -> (
        user: TestUser, laptop: RooftopClient, phone: RooftopClient, gate: SyncTestTransport, doc: RooftopObject,
        onPhone: RooftopObject
    ) {
        let user = try await api.newUser(name)
        let laptop = try await harness.client(server, file: harness.cacheFile("laptop"))
        let (phone, gate) = try harness.controlledClient(server, file: harness.cacheFile("phone"))
        try await laptop.logIn(user)
        try await phone.logIn(user)
        let doc = laptop.object(className, in: .default)
        for (field, value) in fields { doc[field] = value }
        try await doc.save()
        try await phone.sync.pull(datastore: .default)
        let onPhone = try await phone.query(className, in: .default).fromLocalDatastore().getObject(doc.objectId)
        return (user, laptop, phone, gate, doc, onPhone)
    }
}
