@testable import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

@Suite("Sync: continuous mode", .timeLimit(.minutes(5)))
struct SyncContinuousTests {
    @Test("starting pulls each datastore and subscribes; a burst of changes while a pull runs makes one more pull")
    func coalescing() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let channel = FakeLiveChannel()
            server.pullGate.close()
            await client.sync.startContinuous(datastores: [.default], scope: nil, channel: channel)
            #expect(channel.subscribed == [[.default]])
            try await TestWait.until("the first pull waits") { server.pullGate.waiting == 1 }
            let keys = try await server.seed(3, as: client)
            for sequence in 1...10 { channel.emit(.changed(.default, sequence: Int64(sequence))) }
            let datastore = try await client.datastores.open(.default)
            try await TestWait.until("incoming is reported") { try datastore.currentStatus().incoming }
            server.pullGate.open()
            try await client.sync.waitForContinuousIdle()
            #expect(server.pulls.count == 2, "ten signals during a pull make one more pull")
            #expect(try client.storedKeys() == Set(keys))
            #expect(try !datastore.currentStatus().incoming)
            channel.emit(.changed(try DatastoreID("other"), sequence: 11))
            try await client.sync.waitForContinuousIdle()
            #expect(server.pulls.count == 2, "changes of other datastores are ignored")
            await server.shutdown(client)
            #expect(channel.isClosed)
        }
    }

    @Test("the connection coming back resumes the offline queue at once and pulls what was missed")
    func reconnect() async throws {
        try await withRealServer { server in
            let clock = TestClock()
            let client = try server.client(clock: clock)
            _ = try await client.signUpForTest("ann")
            let channel = FakeLiveChannel()
            await client.sync.startContinuous(datastores: [.default], scope: nil, channel: channel)
            try await client.sync.waitForContinuousIdle()
            let events = StreamRecorder(client.outbox.events)
            server.offline = true
            channel.emit(.disconnected)
            let note = client.object("Note", id: "n1", in: .default)
            note["text"] = "offline"
            let id = try #require(try await note.saveEventually())
            try await events.first("a retry is scheduled") { if case .retrying = $0.kind { true } else { false } }
            let datastore = try await client.datastores.open(.default)
            #expect(try !datastore.currentStatus().connected)
            let missed = try await server.seed(1, className: "Missed", as: client)
            server.offline = false
            channel.emit(.connected)
            try await events.first("sent without waiting for the retry delay") { $0.kind == .acknowledged(version: 1, merges: []) }
            #expect(try client.outbox.status(of: id) == .acknowledged(version: 1))
            try await client.sync.waitForContinuousIdle()
            #expect(try client.storedKeys(className: "Missed") == Set(missed))
            #expect(try datastore.currentStatus().connected)
            #expect(clock.now.offset == .zero)
        }
    }

    @Test("the server's confirmation of the subscription pulls again: a change no one was told of is caught")
    func subscribedPulls() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let channel = FakeLiveChannel()
            await client.sync.startContinuous(datastores: [.default], scope: nil, channel: channel)
            try await client.sync.waitForContinuousIdle()
            // Committed after the first pull read the feed, before the subscription was
            // registered: no `changed` signal comes for it.
            let missed = try await server.seed(1, className: "Missed", as: client)
            channel.emit(.subscribed([.default]))
            try await TestWait.until("the pull after the confirmation") {
                try client.storedKeys(className: "Missed") == Set(missed)
            }
        }
    }

    @Test("subscribed is the ready signal: set by the server's confirmation, cleared by a lost connection and by stop(), which leaves no error behind")
    func subscribedStatus() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let datastore = try await client.datastores.open(.default)
            #expect(try !datastore.currentStatus().subscribed, "not before continuous sync starts")
            let channel = FakeLiveChannel()
            // A pull that stop() will cancel halfway.
            server.pullGate.close()
            await client.sync.startContinuous(datastores: [.default], scope: nil, channel: channel)
            try await TestWait.until("the first pull waits") { server.pullGate.waiting == 1 }
            #expect(try !datastore.currentStatus().subscribed, "not before the server confirms the subscription")
            let statuses = StreamRecorder(datastore.status)
            defer { statuses.cancel() }
            channel.emit(.subscribed([.default]))
            try await statuses.next("the confirmation") { $0.subscribed }
            channel.emit(.disconnected)
            try await statuses.next("the connection lost") { !$0.subscribed && !$0.connected }
            channel.emit(.connected)
            try await TestWait.until("connected again") { try datastore.currentStatus().connected }
            #expect(try !datastore.currentStatus().subscribed, "connected, not yet subscribed again")
            channel.emit(.subscribed([.default]))
            try await statuses.next("subscribed again") { $0.subscribed }
            await client.sync.stop()
            server.pullGate.open()
            try await TestWait.until("the cancelled pull has ended") {
                client.core.services.activity.entry(.default).pulls == 0
            }
            let stopped = try datastore.currentStatus()
            #expect(!stopped.subscribed, "stop() ends the subscription")
            #expect(stopped.lastError == nil, "a stopped sync is not an error")
        }
    }

    @Test("polling (no live connection) is subscribed once started, and no longer after stop()")
    func pollingSubscribed() async throws {
        try await withRealServer { server in
            let client = try server.client(clock: TestClock())
            _ = try await client.signUpForTest("ann")
            let datastore = try await client.datastores.open(.default)
            try await client.sync.startContinuous(datastores: [.default])
            try await TestWait.until("subscribed") { try datastore.currentStatus().subscribed }
            try await client.sync.waitForContinuousIdle()
            await client.sync.stop()
            let stopped = try datastore.currentStatus()
            #expect(!stopped.subscribed && stopped.lastError == nil)
            #expect(stopped.connected, "the server still answers: connected says so, subscribed does not")
        }
    }

    @Test("without a live connection, continuous sync polls on the configured clock; stop() ends it")
    func polling() async throws {
        try await withRealServer { server in
            let clock = TestClock()
            let client = try server.client(clock: clock)
            _ = try await client.signUpForTest("ann")
            try await client.sync.startContinuous(datastores: [.default])
            try await TestWait.until("the first pull") { server.pulls.count == 1 }
            try await client.sync.waitForContinuousIdle()
            try await TestWait.until("the poll timer is set") { clock.nextDeadline == SyncEngine.pollingInterval }
            let keys = try await server.seed(2, as: client)
            clock.advance(by: SyncEngine.pollingInterval)
            try await TestWait.until("the poll pulled") { try client.storedKeys() == Set(keys) }
            await client.sync.stop()
            let pulls = server.pulls.count
            clock.advance(by: SyncEngine.pollingInterval * 3)
            try await client.sync.waitForContinuousIdle()
            #expect(server.pulls.count == pulls, "no polling after stop()")
        }
    }
}
