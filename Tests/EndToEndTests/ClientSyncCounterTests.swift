import Foundation
import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

/// A `sum`-merged counter changed on two devices while the server is down converges to the total
/// on both devices and on the server.
@Suite("Client sync: a sum counter across two offline devices")
struct ClientSyncCounterTests {
    /// `count` changes by increments under `sum`, `plays` by increments under the default rule
    /// (increments are atomic: they add up too), and `total` by plain sets of the new value,
    /// which only the class's `sum` rule turns into the total.
    @Test("increments and sets of a sum field made offline on two devices add up everywhere")
    func sumCounterConverges() async throws {
        try await withSyncHarness { harness in
            let first = try await harness.startServer()
            let port = first.port
            let api = try harness.api(first)
            let className = uniqueClassName("Counter")
            try await api.setClass(className, rules: ["count": .sum, "total": .sum])
            let user = try await api.newUser("counter")
            let phone = try await harness.client(first, file: harness.cacheFile("phone"))
            let tablet = try await harness.client(first, file: harness.cacheFile("tablet"))
            try await phone.logIn(user)
            try await tablet.logIn(user)

            let counter = phone.object(className, in: .default)
            counter["count"] = 10
            counter["total"] = 10
            counter["plays"] = 10
            try await counter.save()
            try await phone.sync.pull(datastore: .default)
            try await tablet.sync.pull(datastore: .default)
            let onPhone = try await phone.query(className, in: .default).fromLocalDatastore().getObject(counter.objectId)
            let onTablet = try await tablet.query(className, in: .default).fromLocalDatastore().getObject(counter.objectId)
            #expect(onPhone.int("total") == 10 && onTablet.int("total") == 10)

            await harness.stop(first)
            // Phone: +1 then +2, in two queued changes; tablet: +5.
            try onPhone.increment("count", by: 1)
            onPhone["total"] = 11
            try onPhone.increment("plays", by: 1)
            try await onPhone.saveEventually()
            try onPhone.increment("count", by: 2)
            onPhone["total"] = 13
            try onPhone.increment("plays", by: 2)
            try await onPhone.saveEventually()
            try onTablet.increment("count", by: 5)
            try onTablet.increment("plays", by: 5)
            onTablet["total"] = 15
            try await onTablet.saveEventually()
            #expect(onPhone.int("count") == 13 && onPhone.int("total") == 13)
            #expect(onTablet.int("count") == 15 && onTablet.int("total") == 15)
            #expect(try phone.outbox.hasPendingWrites && tablet.outbox.hasPendingWrites)

            let decisions = StreamRecorder(tablet.sync.mergeDecisions)
            let phoneDecisions = StreamRecorder(phone.sync.mergeDecisions)
            let second = try await harness.startServer(dataDirectory: first.dataDirectory, port: port)
            try await withDeadline(.seconds(60), "both queues draining") {
                try await phone.outbox.waitUntilIdle()
                try await tablet.outbox.waitUntilIdle()
            }
            #expect(try phone.outbox.rejected().isEmpty && tablet.outbox.rejected().isEmpty)
            try await phone.sync.pull(datastore: .default)
            try await tablet.sync.pull(datastore: .default)

            #expect(onPhone.int("count") == 18 && onTablet.int("count") == 18)
            #expect(onPhone.int("total") == 18 && onTablet.int("total") == 18)
            #expect(onPhone.int("plays") == 18 && onTablet.int("plays") == 18, "increments under the default rule")
            let admin = try harness.api(second)
            let stored = try await admin.object(.default, className: className, objectId: counter.objectId, token: user.token)
            #expect(stored?.fields["count"] == 18)
            #expect(stored?.fields["total"] == 18)
            #expect(stored?.fields["plays"] == 18)
            #expect(onPhone.version == stored?.version && onTablet.version == stored?.version)

            // The server merged `total` by the sum rule for the device(s) whose changes came after
            // the other's (the phone's two changes may be applied on either side of the tablet's);
            // the last merge gives the total.
            let all = decisions.elements + phoneDecisions.elements
            let sums = all.filter { $0.decision.field == "total" }
            #expect(!sums.isEmpty, "the concurrent sets of total were merged: \(all)")
            for sum in sums {
                #expect(sum.key == onPhone.key)
                #expect(sum.decision.rule == .sum && sum.decision.baseValue == 10, "\(sum)")
                if case .push = sum.source {} else { Issue.record("the server took the decision: \(sum)") }
            }
            #expect(sums.contains { $0.decision.result == 18 }, "\(sums)")
        }
    }
}
