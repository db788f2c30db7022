import Foundation
import RooftopShared
import Testing
import RooftopTestSupport

/// Accounts and sessions against the real server: sign-up, log-in, log-out, `users/me`, bad
/// tokens, the admin key, and how session tokens are stored.
@Suite("Auth: sign-up, log-in, sessions, admin key", .sharedServer())
struct AuthTests {
    @Test("sign-up answers 201 with the user and a session token of at least 128 random bits")
    func signUp() async throws {
        let (_, client) = try SharedServer.require()
        let name = Unique.name("ada")
        let reply = try await client.send(API.signUp, body: SignUpRequest(username: name, password: "long-enough-1"))
        #expect(reply.status == 201, "\(reply.text)")
        let session = try reply.decode(Session.self)
        #expect(session.user.username == name)
        #expect(!session.user.objectId.isEmpty)
        #expect(session.expiresAt > Timestamp.now)
        #expect(TokenEntropy.bits(of: session.sessionToken) >= 128, "token \(session.sessionToken)")

        // Every session gets its own token.
        let again = try await client.call(
            API.logIn, body: LogInRequest(username: name, password: "long-enough-1"), as: Session.self)
        #expect(again.sessionToken != session.sessionToken)
        #expect(again.user.objectId == session.user.objectId)
    }

    @Test("a taken user name is refused with exists (409)")
    func duplicateUserName() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("dup")
        let reply = try await client.send(API.signUp, body: SignUpRequest(username: user.username, password: "other-password"))
        #expect(reply.status == 409)
        #expect(reply.error?.code == .exists)
        // The first account is untouched: its password still works.
        let session = try await client.call(
            API.logIn, body: LogInRequest(username: user.username, password: user.password), as: Session.self)
        #expect(session.user.objectId == user.id)
    }

    @Test("a weak password is refused with illegalArgument (400)", arguments: ["", "short", "1234567"])
    func weakPassword(password: String) async throws {
        let (_, client) = try SharedServer.require()
        let name = Unique.name("weak")
        let reply = try await client.send(API.signUp, body: SignUpRequest(username: name, password: password))
        #expect(reply.status == 400)
        #expect(reply.error?.code == .illegalArgument)
        // Nothing was created: the name is still free.
        let created = try await client.send(API.signUp, body: SignUpRequest(username: name, password: "now-strong-1"))
        #expect(created.status == 201)
    }

    @Test("log-in: the right password gives a session; a wrong one and an unknown user the same auth error")
    func logIn() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("login")
        let session = try await client.call(
            API.logIn, body: LogInRequest(username: user.username, password: user.password), as: Session.self)
        #expect(session.user.objectId == user.id)

        let wrong = try await client.send(API.logIn, body: LogInRequest(username: user.username, password: "wrong-pass"))
        #expect(wrong.status == 401)
        #expect(wrong.error?.code == .auth)
        let unknown = try await client.send(
            API.logIn, body: LogInRequest(username: Unique.name("nobody"), password: "wrong-pass"))
        #expect(unknown.status == 401)
        #expect(unknown.error?.code == .auth)
        #expect(unknown.error?.message == wrong.error?.message)
        #expect(wrong.error?.message.contains(user.username) == false)
        // A success clears this address's failures for the rest of the suite.
        _ = try await client.call(
            API.logIn, body: LogInRequest(username: user.username, password: user.password), as: Session.self)
    }

    @Test("users/me describes the session's user; anonymous callers get auth")
    func me() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("me")
        let me = try await client.call(API.getCurrentUser, token: user.token, as: UserInfo.self)
        #expect(me.objectId == user.id)
        #expect(me.username == user.username)
        let anonymous = try await client.send(API.getCurrentUser)
        #expect(anonymous.status == 401)
        #expect(anonymous.error?.code == .auth)
    }

    @Test("the session token is also accepted as Authorization: Bearer")
    func bearerToken() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("bearer")
        let me = try await client.send(.GET, "/v1/users/me", headers: ["Authorization": "Bearer \(user.token)"])
        #expect(me.status == 200)
        #expect(try me.decode(UserInfo.self).objectId == user.id)
        let forged = try await client.send(.GET, "/v1/users/me", headers: ["Authorization": "Bearer r:forged"])
        #expect(forged.status == 401)
        #expect(forged.error?.code == .auth)
    }

    @Test("log-out revokes that session only: its token then fails with 401 auth")
    func logOut() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("logout")
        let second = try await client.call(
            API.logIn, body: LogInRequest(username: user.username, password: user.password), as: Session.self)

        let out = try await client.send(API.logOut, token: user.token)
        #expect(out.status == 204)
        for path in ["/v1/users/me", "/v1/info"] {
            let reply = try await client.send(.GET, path, token: user.token)
            #expect(reply.status == 401, "\(path)")
            #expect(reply.error?.code == .auth, "\(path)")
            #expect(reply.headers.first(name: "WWW-Authenticate") != nil)
        }
        let again = try await client.send(API.logOut, token: user.token)
        #expect(again.status == 401)
        // The user's other session is unaffected.
        let me = try await client.call(API.getCurrentUser, token: second.sessionToken, as: UserInfo.self)
        #expect(me.objectId == user.id)
    }

    @Test(
        "an invalid session token fails with 401 auth, never as anonymous",
        arguments: ["r:not-a-real-token", "garbage", String(repeating: "x", count: 600)])
    func invalidToken(token: String) async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("pub")
        let object = try await client.create("Public", fields: ["n": .int(1)], acl: .of((.everyone, read: true, write: false)), as: owner)
        for reply in [
            try await client.send(API.getCurrentUser, token: token),
            try await client.send(API.getServerInfo, token: token),
            try await client.get(object, as: TestUser(id: "", username: "", password: "", token: token)),
        ] {
            #expect(reply.status == 401, "\(reply.text)")
            #expect(reply.error?.code == .auth)
        }
    }

    @Test("the admin key reads and writes past ACLs and may set class permissions; a user may not")
    func adminKey() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let other = try await client.newUser("other")
        let className = Unique.name("Secret")
        let object = try await client.create(className, fields: ["n": .int(1)], as: owner)

        #expect(try await client.get(object, as: other).status == 404)
        let read = try await client.get(object, admin: true)
        #expect(read.status == 200)
        #expect(try read.decode(ObjectWithIncludes.self).object.fields["n"] == .int(1))
        #expect(try await client.update(object, fields: ["n": .int(2)], admin: true).status == 200)
        #expect(try await client.find(Query(className), admin: true).ids == [object.objectId])

        let permissions = ClassPermissionsRequest(className: className, permissions: ClassPermissions(delete: .nobody))
        let byUser = try await client.send(.PUT, "/v1/classes/\(className)", body: permissions, token: owner.token)
        #expect(byUser.status == 403)
        #expect(byUser.error?.code == .disallowed)
        let byAdmin = try await client.send(.PUT, "/v1/classes/\(className)", body: permissions, admin: true)
        #expect(byAdmin.status == 200, "\(byAdmin.text)")
        #expect(try await client.delete(object, as: owner).status == 403)
        #expect(try await client.delete(object, admin: true).status == 204)
    }

    @Test("a wrong admin key fails with 401 auth, even next to a valid session token")
    func wrongAdminKey() async throws {
        let (server, client) = try SharedServer.require()
        let user = try await client.newUser("wrongkey")
        // Each key from an address of its own: wrong keys are throttled per address (AuthThrottleTests).
        for (index, key) in ["wrong-admin-key-0123456789", server.adminKey + "x", ""].enumerated() {
            let address = "127.0.7.\(index + 1)"
            let me = try await client.send(
                .GET, "/v1/users/me", headers: ["X-Rooftop-Admin-Key": key, "X-Rooftop-Session-Token": user.token],
                from: address)
            #expect(me.status == 401, "key \(key): \(me.text)")
            #expect(me.error?.code == .auth)
            let info = try await client.send(.GET, "/v1/info", headers: ["X-Rooftop-Admin-Key": key], from: address)
            #expect(info.status == 401, "key \(key): \(info.text)")
        }
    }

    @Test("session tokens are stored hashed: no token appears in the database files", TestStorage.sqliteOnly)
    func tokensStoredHashed() async throws {
        let (server, client) = try SharedServer.require()
        var tokens: [String] = []
        var names: [String] = []
        for _ in 0..<3 {
            let user = try await client.newUser("hashed")
            tokens.append(user.token)
            names.append(user.username)
            let session = try await client.call(
                API.logIn, body: LogInRequest(username: user.username, password: user.password), as: Session.self)
            tokens.append(session.sessionToken)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory)
            .filter { $0.hasPrefix("rooftop.sqlite") }
        var contents = Data()
        for file in files {
            contents.append(try Data(contentsOf: URL(fileURLWithPath: server.dataDirectory + "/" + file)))
        }
        // The scan sees the data just written (the user names are stored in clear)...
        for name in names { #expect(contents.range(of: Data(name.utf8)) != nil, "user name \(name) not found in \(files)") }
        // ...but no token, with or without its prefix.
        for token in tokens {
            #expect(contents.range(of: Data(token.utf8)) == nil, "token stored in clear")
            let body = token.split(separator: ":").last.map(String.init) ?? token
            #expect(contents.range(of: Data(body.utf8)) == nil, "token body stored in clear")
        }
    }
}

/// Bounds on the randomness of a session token from its text.
enum TokenEntropy {
    /// The bits the token's random part can carry: its length times the bits per character of its
    /// alphabet (a `prefix:` is not counted), or 0 when it uses characters outside base64url.
    static func bits(of token: String) -> Int {
        let body = token.split(separator: ":", maxSplits: 1).last.map(String.init) ?? token
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard body.allSatisfy(alphabet.contains) else { return 0 }
        let hex = Set("0123456789abcdef")
        return body.count * (body.allSatisfy(hex.contains) ? 4 : 6)
    }
}
