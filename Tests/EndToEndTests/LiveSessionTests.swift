import Foundation
import RooftopShared
import Testing

/// A live connection follows its session: logging out ends what it hears.
@Suite("Live notifications and sessions", .sharedServer(), .serialized)
struct LiveSessionTests {
    @Test("after log-out the connection is told, hears nothing more, and cannot resubscribe without a session")
    func logOutEndsSubscriptions() async throws {
        let (server, client) = try SharedServer.require()
        let reader = try await client.newUser("reader")
        try await withLiveClient(server) { live in
            live.send(.subscribe(datastores: [.default], sessionToken: reader.token))
            #expect(try await live.next() == .subscribed(datastores: [.default]))

            let logOut = try await client.send(API.logOut, token: reader.token)
            #expect(logOut.status == 204)
            guard case .error(let error, let datastore) = try await live.next() else {
                Issue.record("expected an error after the log-out")
                return
            }
            #expect(error.code == .auth)
            #expect(datastore == nil)

            // A change the old session could read is not announced: the server publishes before it
            // answers the write, so a notification would arrive before the answer to the
            // subscribe sent afterwards.
            let again = try await client.call(
                API.logIn, body: LogInRequest(username: reader.username, password: reader.password),
                as: Session.self)
            let renewed = TestUser(id: reader.id, username: reader.username, password: reader.password, token: again.sessionToken)
            _ = try await client.create(Unique.name("Note"), in: .default, fields: ["n": .int(1)], as: renewed)
            live.send(.subscribe(datastores: [], sessionToken: nil))
            #expect(try await live.next() == .subscribed(datastores: []))

            // Without a session the private datastore cannot be subscribed any more...
            live.send(.subscribe(datastores: [.default], sessionToken: nil))
            guard case .error(let refusal, let refused) = try await live.next() else {
                Issue.record("expected a refusal for a private datastore without a session")
                return
            }
            #expect(refusal.code == .auth)
            #expect(refused == .default)
            #expect(try await live.next() == .subscribed(datastores: []))

            // ...and the revoked token is refused as well.
            live.send(.subscribe(datastores: [.default], sessionToken: reader.token))
            guard case .error(let revoked, _) = try await live.next() else {
                Issue.record("expected the revoked token to be refused")
                return
            }
            #expect(revoked.code == .auth)
        }
    }
}
