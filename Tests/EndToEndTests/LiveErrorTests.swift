import Foundation
import RooftopShared
import Testing

/// Live notifications: what goes wrong is answered with `{"type": "error"}` and the connection
/// stays open; bad credentials on the upgrade request are refused. No test here writes objects,
/// so parallel tests never hear of each other.
@Suite("Live notifications: errors", .sharedServer())
struct LiveErrorTests {
    @Test("a bad session token on the upgrade request is refused, never taken as anonymous")
    func badTokenOnUpgrade() async throws {
        let (server, client) = try SharedServer.require()
        let user = try await client.newUser("live")
        #expect(try await client.send(API.logOut, token: user.token).status == 204)
        for token in ["r:forged-token", user.token] {
            await #expect(throws: LiveClientError.self, "token \(token)") {
                let live = try await LiveClient.connect(to: server, sessionToken: token)
                await live.close()
            }
        }
    }

    @Test("bad messages get an error and the connection stays open", arguments: [
        "not json", "{}", #"{"type":"subscribe"}"#, #"{"type":"dance","datastores":[]}"#,
        #"{"type":"subscribe","datastores":["Not A Datastore!"]}"#, #"[1,2,3]"#,
    ])
    func badMessages(text: String) async throws {
        let (server, client) = try SharedServer.require()
        let user = try await client.newUser("live")
        try await withLiveClient(server) { live in
            live.send(text: text)
            guard case .error(let error, _) = try await live.next() else {
                Issue.record("expected an error for \(text)")
                return
            }
            #expect([RooftopError.Code.request, .illegalArgument].contains(error.code), "\(error)")
            #expect(live.isOpen)
            try await live.subscribe(to: [.app], as: user)
        }
    }

    @Test("subscribing to an unknown or inaccessible datastore gives an error about it; the others still subscribe")
    func unknownDatastore() async throws {
        let (server, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let stranger = try await client.newUser("stranger")
        let unknown = try DatastoreID("." + Unique.name("missing").replacingOccurrences(of: "_", with: "-"))
        let foreign = try await client.createShareable(by: owner).id
        try await withLiveClient(server) { live in
            live.send(.subscribe(datastores: [unknown, foreign, .app], sessionToken: stranger.token))
            var errors: [DatastoreID: RooftopError] = [:]
            var subscribed: [DatastoreID]?
            while subscribed == nil {
                switch try await live.next() {
                case .error(let error, let datastore): errors[datastore ?? .app] = error
                case .subscribed(let datastores): subscribed = datastores
                case .changed: break
                }
            }
            #expect(subscribed == [.app])
            #expect(errors[unknown]?.code == .notFound)
            #expect(errors[foreign]?.code == .notFound, "existence of a datastore without a role is not revealed")
            #expect(live.isOpen)
        }
    }

    @Test("a bad session token gives an auth error; a private datastore needs a signed-in user")
    func authErrors() async throws {
        let (server, _) = try SharedServer.require()
        try await withLiveClient(server) { live in
            live.send(.subscribe(datastores: [.app], sessionToken: "r:forged-token"))
            guard case .error(let error, _) = try await live.next() else {
                Issue.record("expected an error")
                return
            }
            #expect(error.code == .auth)
            live.send(.subscribe(datastores: [.default], sessionToken: nil))
            var sawAuthError = false
            while true {
                let message = try await live.next()
                if case .error(let error, let datastore) = message {
                    #expect(error.code == .auth)
                    #expect(datastore == .default)
                    sawAuthError = true
                }
                if case .subscribed(let datastores) = message {
                    #expect(datastores.isEmpty)
                    break
                }
            }
            #expect(sawAuthError)
        }
    }

    @Test("the upgrade needs the application ID")
    func upgradeNeedsApplicationId() async throws {
        let (server, _) = try SharedServer.require()
        await #expect(throws: LiveClientError.self) {
            let live = try await LiveClient.connect(to: server, appId: "wrong-app")
            await live.close()
        }
    }

    @Test("subscribing creates no datastore: the user's own missing private datastores wait for their first change")
    func subscribeDoesNotCreate() async throws {
        let (server, client) = try SharedServer.require()
        let user = try await client.newUser("live")
        let before = try await client.datastoreIDs(token: user.token)
        let names = try (0..<60).map { try DatastoreID("never-\($0)") }
        try await withLiveClient(server) { live in
            try await live.subscribe(to: names, as: user)
        }
        #expect(try await client.datastoreIDs(token: user.token) == before, "subscribing created datastores")
    }

    @Test("subscriptions are bounded per connection; one huge message is refused at once, whole")
    func subscriptionsBounded() async throws {
        let (server, client) = try SharedServer.require()
        let user = try await client.newUser("live")
        let before = try await client.datastoreIDs(token: user.token)
        try await withLiveClient(server) { live in
            let huge = try (0..<3000).map { try DatastoreID("d\($0)") }
            live.send(.subscribe(datastores: huge, sessionToken: user.token))
            guard case .error(let error, nil) = try await live.next() else {
                Issue.record("expected one error for 3,000 datastores")
                return
            }
            #expect(error.code == .sizeLimit, "\(error)")
            // The limit counts across messages too.
            try await live.subscribe(to: try (0..<60).map { try DatastoreID("a\($0)") }, as: user)
            live.send(.subscribe(datastores: try (0..<60).map { try DatastoreID("b\($0)") }, sessionToken: user.token))
            guard case .error(let second, nil) = try await live.next() else {
                Issue.record("expected an error past 100 subscriptions")
                return
            }
            #expect(second.code == .sizeLimit, "\(second)")
            #expect(live.isOpen)
            // Unsubscribing makes room again.
            live.send(.unsubscribe(datastores: try (0..<60).map { try DatastoreID("a\($0)") }))
            try await live.subscribe(to: [.app], as: user)
        }
        #expect(try await client.datastoreIDs(token: user.token) == before)
    }
}
