import Foundation
import RooftopShared
import Testing

/// Log-in throttling: after 5 failures within the window, further attempts are refused with 429
/// `retryLater` and a `Retry-After`, per user name and per client address. Each test logs in
/// from its own loopback address (the whole 127/8 reaches a server on 127.0.0.1), so that the
/// per-address counters of different tests never meet.
@Suite("Auth: log-in throttling", .sharedServer())
struct AuthThrottleTests {
    /// The server's limit (`ServerConfiguration.loginThrottleAttempts`).
    static let maxFailures = 5

    @Test("5 failures with different passwords throttle the user name: even the right password gets 429")
    func throttledAfterFiveFailures() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("victim")
        let address = "127.0.0.11"
        for attempt in 0..<Self.maxFailures {
            let reply = try await client.logIn(user.username, password: "wrong-\(attempt)", from: address)
            #expect(reply.status == 401, "attempt \(attempt): \(reply.text)")
            #expect(reply.error?.code == .auth)
        }
        let refused = try await client.logIn(user.username, password: user.password, from: address)
        #expect(refused.status == 429, "\(refused.text)")
        #expect(refused.error?.code == .retryLater)
        let retryAfter = refused.headers.first(name: "Retry-After").flatMap { Int($0) }
        #expect(retryAfter.map { (1...60).contains($0) } == true, "Retry-After: \(String(describing: retryAfter))")
        // The refusal did not sign in: the existing session is all the user has.
        let me = try await client.call(.GET, "/v1/users/me", token: user.token, as: UserInfo.self)
        #expect(me.objectId == user.id)
    }

    @Test("the per-user-name limit holds across client addresses; other users are not affected")
    func perUserName() async throws {
        let (_, client) = try SharedServer.require()
        let victim = try await client.newUser("victim")
        let bystander = try await client.newUser("bystander")
        // Spread the failures over several addresses so that no address reaches its own limit.
        for attempt in 0..<Self.maxFailures {
            let reply = try await client.logIn(victim.username, password: "guess-\(attempt)", from: "127.0.1.\(attempt + 1)")
            #expect(reply.status == 401)
        }
        let refused = try await client.logIn(victim.username, password: victim.password, from: "127.0.1.100")
        #expect(refused.status == 429, "\(refused.text)")
        #expect(refused.error?.code == .retryLater)
        #expect(refused.headers.first(name: "Retry-After") != nil)
        let other = try await client.logIn(bystander.username, password: bystander.password, from: "127.0.1.100")
        #expect(other.status == 200, "\(other.text)")
    }

    @Test("the per-address limit holds across user names, known or not; other addresses are not affected")
    func perAddress() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("target")
        let address = "127.0.2.1"
        for attempt in 0..<Self.maxFailures {
            // Unknown user names count too, and answer exactly like wrong passwords.
            let reply = try await client.logIn(Unique.name("ghost"), password: "guess-\(attempt)", from: address)
            #expect(reply.status == 401)
            #expect(reply.error?.code == .auth)
        }
        let refused = try await client.logIn(user.username, password: user.password, from: address)
        #expect(refused.status == 429, "\(refused.text)")
        #expect(refused.error?.code == .retryLater)
        let elsewhere = try await client.logIn(user.username, password: user.password, from: "127.0.2.2")
        #expect(elsewhere.status == 200, "\(elsewhere.text)")
    }

    @Test("a successful log-in before the limit clears the failures")
    func successResets() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("forgetful")
        let address = "127.0.3.1"
        for round in 0..<3 {
            for attempt in 0..<(Self.maxFailures - 1) {
                let reply = try await client.logIn(user.username, password: "typo-\(round)-\(attempt)", from: address)
                #expect(reply.status == 401)
            }
            let success = try await client.logIn(user.username, password: user.password, from: address)
            #expect(success.status == 200, "round \(round): \(success.text)")
        }
    }
}
