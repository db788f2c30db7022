import Foundation
@testable import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

/// The client library's ``LiveConnection`` against the real server: subscribing with a session,
/// hearing of writes made through the client's own API, changing subscriptions and sessions
/// while connected, trust and application-ID failures, and closing.
///
/// Every user writes to its own private `default` datastore, so tests sharing the server never
/// hear of each other's changes.
@Suite("Client live connection", .sharedServer())
struct ClientLiveTests {
    @Test("connects, subscribes with a session, and hears of each write")
    func subscribeAndHear() async throws {
        let (server, _) = try SharedServer.require()
        let session = SessionTokenStore()
        try await ClientTransportFixture.withRemoteAPI(server, session: session) { api in
            let user = try await ClientTransportFixture.signUp(api, session: session)
            let (live, events) = try await LiveConnection.started(
                to: server, token: user.sessionToken, subscribing: [.default])
            #expect(try await events.next() == .connected)
            #expect(try await events.next() == .subscribed([.default]))
            try await ClientTransportFixture.write(api, in: .default)
            let (datastore, first) = try await events.nextChange()
            #expect(datastore == .default)
            try await ClientTransportFixture.write(api, in: .default)
            let (_, second) = try await events.nextChange()
            #expect(second > first)
            // A clean close: the stream ends with a deliberate disconnection (the deadline only
            // catches a hang; nothing is timed).
            await live.close()
            try await events.waitForEnd()
            #expect(events.elements.last == .disconnected(nil))
        }
    }

    @Test("subscriptions change while connected")
    func changeSubscriptions() async throws {
        let (server, _) = try SharedServer.require()
        let session = SessionTokenStore()
        let work = try DatastoreID("work")
        let spare = try DatastoreID("spare")
        try await ClientTransportFixture.withRemoteAPI(server, session: session) { api in
            let user = try await ClientTransportFixture.signUp(api, session: session)
            let (live, events) = try await LiveConnection.started(
                to: server, token: user.sessionToken, subscribing: [.default])
            #expect(try await events.next() == .connected)
            #expect(try await events.next() == .subscribed([.default]))
            await live.subscribe([work, .default])
            #expect(try await events.next() == .subscribed([work]))
            try await ClientTransportFixture.write(api, in: work)
            #expect(try await events.nextChange().0 == work)

            await live.unsubscribe([.default])
            // The server handles a connection's messages in order: once `spare` is confirmed,
            // the unsubscribe has been applied.
            await live.subscribe([spare])
            #expect(try await events.next() == .subscribed([spare]))
            try await ClientTransportFixture.write(api, in: .default)
            try await ClientTransportFixture.write(api, in: work)
            #expect(try await events.nextChange().0 == work, "no notification for the unsubscribed datastore")
            #expect(await live.subscriptions == [work, spare])
            await live.close()
        }
    }

    @Test("a bad token is an auth error; a new session resubscribes")
    func badTokenThenNewSession() async throws {
        let (server, _) = try SharedServer.require()
        let session = SessionTokenStore()
        try await ClientTransportFixture.withRemoteAPI(server, session: session) { api in
            let user = try await ClientTransportFixture.signUp(api, session: session)
            let (live, events) = try await LiveConnection.started(
                to: server, token: "r:not-a-session", subscribing: [.default])
            #expect(try await events.next() == .connected)
            guard case .error(let error, nil) = try await events.next() else {
                Issue.record("expected a connection-level error, got \(events.elements)")
                await live.close()
                return
            }
            #expect(error.code == .auth)
            await live.updateSession(token: user.sessionToken)
            #expect(try await events.next() == .disconnected(nil))
            #expect(try await events.next() == .connected)
            #expect(try await events.next() == .subscribed([.default]))
            try await ClientTransportFixture.write(api, in: .default)
            #expect(try await events.nextChange().0 == .default)
            await live.close()
        }
    }

    /// After switching from A to B, the connection must hear of B's `default` and no longer of
    /// A's. A second connection, still A's, hears A's write and its sequence; A writes before B
    /// does: the first change the switched connection hears must be B's, not A's.
    @Test("switching sessions reconnects as the new user")
    func switchSessions() async throws {
        let (server, _) = try SharedServer.require()
        let sessionA = SessionTokenStore()
        let sessionB = SessionTokenStore()
        try await ClientTransportFixture.withRemoteAPI(server, session: sessionA) { apiA in
            try await ClientTransportFixture.withRemoteAPI(server, session: sessionB) { apiB in
                let userA = try await ClientTransportFixture.signUp(apiA, session: sessionA)
                let userB = try await ClientTransportFixture.signUp(apiB, session: sessionB)
                let (live, events) = try await LiveConnection.started(
                    to: server, token: userA.sessionToken, subscribing: [.default])
                let (stayingA, eventsOfA) = try await LiveConnection.started(
                    to: server, token: userA.sessionToken, subscribing: [.default])
                #expect(try await events.next() == .connected)
                #expect(try await events.next() == .subscribed([.default]))
                #expect(try await eventsOfA.next() == .connected)
                #expect(try await eventsOfA.next() == .subscribed([.default]))
                try await ClientTransportFixture.write(apiA, in: .default)
                let firstOfA = try await events.nextChange().1
                #expect(try await eventsOfA.nextChange().1 == firstOfA, "both connections hear A")
                await live.updateSession(token: userB.sessionToken)
                #expect(try await events.next() == .disconnected(nil))
                #expect(try await events.next() == .connected)
                #expect(try await events.next() == .subscribed([.default]))
                try await ClientTransportFixture.write(apiA, in: .default)
                let lastOfA = try await eventsOfA.nextChange().1
                try await ClientTransportFixture.write(apiB, in: .default)
                let (_, heard) = try await events.nextChange()
                #expect(heard != lastOfA, "the first change heard is B's, not A's (\(heard), A's \(lastOfA))")
                await live.close()
                await stayingA.close()
            }
        }
    }

    @Test("the live socket applies the trust policy and the application ID")
    func trustAndApplicationID() async throws {
        let (server, _) = try SharedServer.require()
        let (untrusting, refused) = try await LiveConnection.started(
            to: server, token: nil, subscribing: [.app], trust: .systemRoots)
        guard case .disconnected(let tls?) = try await refused.next() else {
            Issue.record("expected a failed attempt, got \(refused.elements)")
            await untrusting.close()
            return
        }
        #expect(tls.code == .tls, "\(tls)")
        await untrusting.close()

        let (stranger, declined) = try await LiveConnection.started(
            to: server, token: nil, subscribing: [.app], appId: "someone-else")
        guard case .disconnected(let auth?) = try await declined.next() else {
            Issue.record("expected a refused upgrade, got \(declined.elements)")
            await stranger.close()
            return
        }
        #expect(auth.code == .auth, "\(auth)")
        await stranger.close()
        #expect(!refused.elements.contains(.connected) && !declined.elements.contains(.connected))
    }
}

/// Live connection tests that need a server of their own: nobody else's connections to count,
/// or a server to stop and restart.
@Suite("Client live connection: own servers")
struct ClientLiveRestartTests {
    /// swift-websocket leaves the connection open when the server declines the upgrade; each
    /// attempt's event loop group is shut down to close it, or every retry would leak a socket
    /// (and the server would hold them too).
    @Test("declined upgrades leave no connection behind", .enabled(if: TCPConnections.isAvailable))
    func declinedUpgradesAreClosed() async throws {
        try await withServer { server in
            let (live, events) = try await LiveConnection.started(
                to: server, token: nil, subscribing: [.app], appId: "someone-else")
            for _ in 0..<3 {
                guard case .disconnected(let error?) = try await events.next() else {
                    throw FixtureError("expected a declined upgrade, got \(events.elements)")
                }
                #expect(error.code == .auth)
            }
            await live.close()
            try await TestWait.until(within: .seconds(30), "the declined connections to close", every: .milliseconds(10)) {
                TCPConnections.openConnections(toPort: server.port) == 0
            }
        }
    }

    @Test("a stopped server is reported, attempts back off, and the restarted server gets the subscriptions again")
    func reconnectAfterRestart() async throws {
        let directory = TemporaryDirectory.make(prefix: "client-live-restart")
        let first = try await ServerProcess.start(dataDirectory: directory)
        let port = first.port
        let session = SessionTokenStore()
        let user: Session
        do {
            user = try await ClientTransportFixture.withRemoteAPI(first, session: session) {
                try await ClientTransportFixture.signUp($0, session: session)
            }
        } catch {
            await first.stop()
            throw error
        }
        let (live, events) = try await LiveConnection.started(
            to: first, token: user.sessionToken, subscribing: [.default])
        do {
            #expect(try await events.next() == .connected)
            #expect(try await events.next() == .subscribed([.default]))
            await first.stop()
            guard case .disconnected(let dropped?) = try await events.next() else {
                throw FixtureError("expected the drop to be reported, got \(events.elements)")
            }
            #expect([.network, .noConnection].contains(dropped.code), "\(dropped)")
            // While the server is down, attempts fail and are retried.
            _ = try await events.next("a refused attempt") {
                if case .disconnected(let error?) = $0 { error.code == .noConnection } else { false }
            }
            #expect(events.elements.filter { $0 == .connected }.count == 1, "no connection while the server is down")

            // The same data directory (same CA, same sessions) on the same port.
            try await withServer(dataDirectory: directory, extraArguments: ["--port", "\(port)"]) { second in
                #expect(second.port == port)
                _ = try await events.next("the reconnect") { $0 == .connected }
                #expect(try await events.next() == .subscribed([.default]))
                _ = try await ClientTransportFixture.withRemoteAPI(second, session: session) { api in
                    try await ClientTransportFixture.write(api, in: .default)
                }
                #expect(try await events.nextChange().0 == .default)
                await live.close()
                try await events.waitForEnd()
            }
        } catch {
            await live.close()
            await first.stop()
            throw error
        }
    }
}
