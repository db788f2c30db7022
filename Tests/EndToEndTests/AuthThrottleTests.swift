import Foundation
import RooftopShared
import Testing

/// Log-in throttling: after 5 failures within the window, further attempts are refused with 429
/// `retryLater` and a `Retry-After`, per user name from one client address and per address; a
/// user name alone is only slowed down. Wrong admin keys are refused per address alike. Each test logs in
/// from its own loopback address (the whole 127/8 reaches a server on 127.0.0.1), so that the
/// per-address counters of different tests never meet.
@Suite("Auth: log-in throttling", .sharedServer(["--trusted-proxies", "127.0.9.1"]))
struct AuthThrottleTests {
    /// The server's limit (`ServerConfiguration.loginThrottleAttempts`).
    static let maxFailures = 5
    /// The one trusted proxy of the suite's server (as in the suite trait); every other address is a client.
    static let proxy = "127.0.9.1"

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
        let me = try await client.call(API.getCurrentUser, token: user.token, as: UserInfo.self)
        #expect(me.objectId == user.id)
    }

    @Test("failures on a user name from other addresses only slow it down: its owner still logs in from elsewhere")
    func perUserNameIsNotALockOut() async throws {
        let (_, client) = try SharedServer.require()
        let victim = try await client.newUser("victim")
        let bystander = try await client.newUser("bystander")
        // An attacker spreads its guesses over several addresses (no address reaches its own
        // limit): past 5, each guess on the name waits a little longer, and none locks it.
        for attempt in 0..<(Self.maxFailures + 2) {
            let reply = try await client.logIn(victim.username, password: "guess-\(attempt)", from: "127.0.1.\(attempt + 1)")
            #expect(reply.status == 401, "attempt \(attempt): \(reply.text)")
        }
        let start = ContinuousClock.now
        let owner = try await client.logIn(victim.username, password: victim.password, from: "127.0.1.100")
        #expect(owner.status == 200, "\(owner.text)")
        // Slowed down (the delay grows from 250 ms), but bounded (at most 4 s).
        #expect(ContinuousClock.now - start >= .milliseconds(250))
        let other = try await client.logIn(bystander.username, password: bystander.password, from: "127.0.1.100")
        #expect(other.status == 200, "\(other.text)")
    }

    @Test("guesses at look-alikes of a user name (ALICE, Alice) count against that name: its owner is slowed down")
    func lookAlikesShareTheNameThrottle() async throws {
        let (_, client) = try SharedServer.require()
        let victim = try await client.newUser("victim")
        let spellings = [victim.username.uppercased(), victim.username.prefix(1).uppercased() + victim.username.dropFirst()]
        for attempt in 0..<(Self.maxFailures + 2) {
            let spelling = spellings[attempt % spellings.count]
            let reply = try await client.logIn(spelling, password: "guess-\(attempt)", from: "127.0.5.\(attempt + 1)")
            #expect(reply.status == 401, "attempt \(attempt): \(reply.text)")
        }
        let start = ContinuousClock.now
        let owner = try await client.logIn(victim.username, password: victim.password, from: "127.0.5.100")
        #expect(owner.status == 200, "\(owner.text)")
        #expect(ContinuousClock.now - start >= .milliseconds(250), "the guesses at its look-alikes did not count")
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

    @Test("a successful log-in forgives the name's failures, not the address's: one's own account cannot wipe guesses at others")
    func successResets() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("forgetful")
        let address = "127.0.3.1"
        // A typo or two before the right password: the name is forgiven.
        for round in 0..<2 {
            let typo = try await client.logIn(user.username, password: "typo-\(round)", from: address)
            #expect(typo.status == 401)
            let success = try await client.logIn(user.username, password: user.password, from: address)
            #expect(success.status == 200, "round \(round): \(success.text)")
        }
        // Guesses at other names from another address, each name once, with a log-in to one's
        // own account in between: the address still counts every failure.
        let spraying = "127.0.3.2"
        var victims: [TestUser] = []
        for _ in 0...Self.maxFailures { victims.append(try await client.newUser("sprayed")) }
        for victim in victims.prefix(Self.maxFailures - 1) {
            #expect(try await client.logIn(victim.username, password: "guess", from: spraying).status == 401)
        }
        #expect(try await client.logIn(user.username, password: user.password, from: spraying).status == 200)
        let last = try await client.logIn(victims[Self.maxFailures - 1].username, password: "guess", from: spraying)
        #expect(last.status == 401, "the address's fifth failure")
        let refused = try await client.logIn(victims[Self.maxFailures].username, password: "guess", from: spraying)
        #expect(refused.status == 429, "\(refused.text)")
    }

    @Test("log-in checks the user name as sign-up does: a 2 MB or control-character name is a 400")
    func userNameValidated() async throws {
        let (_, client) = try SharedServer.require()
        for name in [String(repeating: "n", count: 2 * 1024 * 1024), "", " padded", "tab\tname"] {
            let reply = try await client.logIn(name, password: "password-1", from: "127.0.4.1")
            #expect(reply.status == 400, "\(name.prefix(20)): \(reply.text.prefix(200))")
            #expect(reply.error?.code == .illegalArgument)
            #expect(reply.error?.field == "username")
        }
        // Refused before the throttle: the address has used none of its attempts.
        let user = try await client.newUser("valid")
        #expect(try await client.logIn(user.username, password: user.password, from: "127.0.4.1").status == 200)
    }

    @Test("guesses sent at once on many connections are counted before they are checked: at most 5 pass")
    func concurrentGuesses() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("rushed")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for attempt in 0..<16 {
                group.addTask {
                    try await client.logIn(user.username, password: "rush-\(attempt)", from: "127.0.4.2").status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 401 }.count <= Self.maxFailures, "\(statuses.sorted())")
        #expect(statuses.allSatisfy { $0 == 401 || $0 == 429 }, "\(statuses.sorted())")
    }

    @Test("wrong admin keys are throttled per address; other addresses are not")
    func adminKeyThrottled() async throws {
        let (server, client) = try SharedServer.require()
        let address = "127.0.4.3"
        let wrong = ["X-Rooftop-Admin-Key": "wrong-admin-key-0123456789"]
        for _ in 0..<Self.maxFailures {
            let reply = try await client.send(.GET, "/v1/users", headers: wrong, from: address)
            #expect(reply.status == 401, "\(reply.text)")
        }
        let refused = try await client.send(.GET, "/v1/users", headers: wrong, from: address)
        #expect(refused.status == 429, "\(refused.text)")
        #expect(refused.error?.code == .retryLater)
        #expect(refused.headers.first(name: "Retry-After") != nil)
        // Even the right key is refused from there for now; from elsewhere it works.
        let right = ["X-Rooftop-Admin-Key": server.adminKey]
        #expect(try await client.send(.GET, "/v1/users", headers: right, from: address).status == 429)
        #expect(try await client.send(.GET, "/v1/users", headers: right, from: "127.0.4.4").status == 200)
    }

    @Test("the live upgrade counts wrong admin keys and refuses a throttled address, even with the right key")
    func adminKeyThrottledOnLiveUpgrade() async throws {
        // A server of its own: the live client connects from 127.0.0.1, which this test throttles.
        try await withServerAndClient { server, client in
            for _ in 0..<Self.maxFailures {
                await #expect(throws: LiveClientError.self) {
                    let live = try await LiveClient.connect(to: server, adminKey: "wrong-admin-key-0123456789")
                    await live.close()
                }
            }
            // Each refused upgrade was also answered by the HTTP route: both count, so the
            // address is throttled by now. The upgrade itself refuses the right key.
            await #expect(throws: LiveClientError.self) {
                let live = try await LiveClient.connect(to: server, adminKey: server.adminKey)
                await live.close()
            }
            #expect(try await client.send(API.listUsers, admin: true).status == 429)
            // A live connection without an admin key is not affected.
            let user = try await client.newUser("live")
            try await withLiveClient(server) { live in try await live.subscribe(to: [.default], as: user) }
        }
    }

    @Test("behind a trusted proxy each client is throttled by its X-Forwarded-For address; elsewhere the header is ignored")
    func trustedProxy() async throws {
        let (_, client) = try SharedServer.require()
        func guess(_ forwarded: String, via peer: String = Self.proxy) async throws -> Int {
            try await client.logIn(
                Unique.name("ghost"), password: "guess", from: peer, headers: ["X-Forwarded-For": forwarded]
            ).status
        }
        // A client behind the proxy: a spoofed entry on the left does not change who it is.
        for attempt in 0..<Self.maxFailures {
            #expect(try await guess("198.51.100.\(attempt), 203.0.113.7") == 401)
        }
        #expect(try await guess("203.0.113.7") == 429, "the client behind the proxy was not throttled")
        // Another client behind the same proxy is not affected.
        #expect(try await guess("203.0.113.8") == 401, "clients behind one proxy share one throttle")
        // From a peer that is not a trusted proxy, X-Forwarded-For is ignored: its own address counts.
        #expect(try await guess("203.0.113.9", via: "127.0.9.2") == 401)
        for _ in 0..<(Self.maxFailures - 1) { _ = try await guess("203.0.113.10", via: "127.0.9.2") }
        #expect(try await guess("203.0.113.11", via: "127.0.9.2") == 429, "a forged X-Forwarded-For escaped the throttle")
    }
}
