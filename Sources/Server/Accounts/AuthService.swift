import Crypto
import Foundation
import HummingbirdBcrypt
import NIOPosix
import RooftopShared

/// Accounts and sessions: sign-up, log-in, log-out, and turning a request's credentials into an
/// ``AccessContext``.
///
/// Passwords are hashed with bcrypt off the async executors (on NIO's thread pool), after a
/// SHA-256 pre-hash so that bcrypt's 72-byte input limit never truncates a long password. Session
/// tokens carry 256 random bits and are stored hashed, with an expiry. Failed log-ins are
/// throttled (see ``LoginThrottle``): refused per user name from one client address and per
/// address, slowed down per user name alone; wrong admin keys are refused per address.
final class AuthService: Sendable {
    private let storage: any AccountStorage
    private let roles: RoleDirectory
    private let live: LiveHub
    private let throttle: LoginThrottle
    private let sessionLifetime: Duration
    private let clock: ServerClock
    private let bcryptCost: UInt8
    private let adminKeyHash: String
    /// A bcrypt hash of a random password, verified against when the user does not exist, so
    /// that a log-in takes as long whether the account exists or not.
    private let dummyHash: String
    /// The other server processes, told of log-outs and log-ins so that they revoke and throttle
    /// alike.
    private let cluster: ClusterLink

    init(
        storage: any AccountStorage, roles: RoleDirectory, live: LiveHub, configuration: ServerConfiguration,
        adminKeyHash: String, cluster: ClusterLink
    ) {
        self.cluster = cluster
        self.storage = storage
        self.roles = roles
        self.live = live
        self.throttle = LoginThrottle(
            policy: .init(maxFailures: configuration.loginThrottleAttempts, window: configuration.loginThrottleWindow),
            clock: configuration.clock)
        self.sessionLifetime = configuration.sessionLifetime
        self.clock = configuration.clock
        self.bcryptCost = configuration.bcryptCost
        self.adminKeyHash = adminKeyHash
        self.dummyHash = Bcrypt.hash(AuthService.prehash(SessionToken.generate()), cost: configuration.bcryptCost)
    }

    /// Creates an account, its name stored in NFC, and logs it in.
    /// - Throws: `illegalArgument` for a request that breaks the rules
    ///   (``SignUpRequest/validate()``), `exists` when the name, or one that differs from it only
    ///   in case, Unicode form, width or invisible characters, is taken.
    func signUp(_ request: SignUpRequest) async throws -> Session {
        try request.validate()
        let passwordHash = try await hashPassword(request.password)
        let user = UserRecord(
            id: ObjectID.generate(), username: SignUpRequest.normalizedUsername(request.username), email: request.email,
            passwordHash: passwordHash, createdAt: clock.now())
        try await storage.insertUser(user)
        return try await startSession(for: user)
    }

    /// Checks a user name and password and starts a session.
    ///
    /// The name is looked up as people read it: `alice` logs in to `Alice`'s account, as does any
    /// name with the same key (``SignUpRequest/usernameKey(_:)``; see ``AccountStorage/user(logInName:)``).
    /// The attempt is counted against the throttle, per name key, before the password is checked
    /// (and forgiven when it is right), so that guesses sent at once on many connections, or at
    /// look-alikes of one name, cannot all pass.
    /// - Throws: `illegalArgument` for a user name that sign-up would refuse, `auth` for wrong
    ///   credentials (the same message whether the user exists or not), `retryLater` when
    ///   throttled.
    func logIn(_ request: LogInRequest, clientAddress: String?) async throws -> Session {
        // Before the key: the length check bounds the work of normalizing.
        try SignUpRequest.validateUsername(request.username)
        let keys = ThrottleKeys.logIn(
            usernameKey: SignUpRequest.usernameKey(request.username), address: clientAddress)
        let reservation = try await throttle.reserve(hard: keys.hard, soft: keys.soft)
        // A name guessed at from elsewhere is slowed down, never locked.
        if reservation.delay > .zero { try await Task.sleep(for: reservation.delay) }
        let user = try await storage.user(logInName: request.username)
        // Verify against a dummy hash for unknown users too, so timing does not reveal accounts.
        let hash = user?.passwordHash ?? dummyHash
        let matches = try await verifyPassword(request.password, hash: hash)
        guard let user, matches else {
            await cluster.send(.loginFailed(keys: reservation.keys))
            throw RooftopError(.auth, "wrong user name or password")
        }
        await throttle.forgive(reservation)
        await cluster.send(.loginSucceeded(keys: reservation.keys))
        return try await startSession(for: user)
    }

    /// Revokes a session; live connections that use it stop hearing of changes.
    func logOut(token: String) async throws {
        let hash = SessionToken.hash(token)
        try await storage.deleteSession(tokenHash: hash)
        await live.revokeSession(hash: hash)
        await cluster.send(.sessionRevoked(tokenHash: hash))
    }

    /// Sets a user's password (administration) and ends their sessions: whoever held one signs in
    /// again with the new password.
    /// - Throws: `illegalArgument` for a password that breaks the rules, `notFound` for an
    ///   unknown user.
    func setPassword(_ request: SetPasswordRequest, userId: String) async throws {
        try request.validate()
        let hash = try await hashPassword(request.password)
        guard try await storage.setPasswordHash(hash, userId: userId) else {
            throw RooftopError(.notFound, "no user \(userId.prefix(80))")
        }
        _ = try await revokeSessions(userId: userId)
    }

    // MARK: Administration (REST with the admin key, and the dashboard)

    /// A page of users in user-name order, after `username`, with their effective roles.
    func users(after username: String?, limit: Int) async throws -> UserList {
        let records = try await storage.users(after: username, limit: limit + 1)
        var users: [UserInfo] = []
        for record in records.prefix(limit) { users.append(try await userInfo(record)) }
        return UserList(users: users, next: records.count > limit ? users.last?.username : nil)
    }

    /// A user's record.
    /// - Throws: `notFound` for an unknown user.
    func existingUser(id userId: String) async throws -> UserRecord {
        guard let record = try await storage.user(id: userId) else {
            throw RooftopError(.notFound, "no user \(userId.prefix(80))")
        }
        return record
    }

    /// A user's sessions, newest first (never their tokens).
    /// - Throws: `notFound` for an unknown user.
    func sessions(ofUser userId: String) async throws -> [SessionInfo] {
        _ = try await existingUser(id: userId)
        return try await storage.sessions(userId: userId).map {
            SessionInfo(id: $0.tokenHash, createdAt: $0.createdAt, expiresAt: $0.expiresAt)
        }
    }

    /// Ends every session of a user (administration), here and in the other server processes.
    /// - Returns: How many were ended.
    /// - Throws: `notFound` for an unknown user.
    func revokeSessions(userId: String) async throws -> Int {
        _ = try await existingUser(id: userId)
        let hashes = try await storage.deleteSessions(userId: userId)
        for hash in hashes {
            await live.revokeSession(hash: hash)
            await cluster.send(.sessionRevoked(tokenHash: hash))
        }
        return hashes.count
    }

    /// Checks an admin key (REST, the live upgrade, the dashboard's sign-in), throttled per client
    /// address in every server process: after the allowed failures, even the right key is refused
    /// until they leave the window (a right key does not clear them).
    /// - Throws: `auth` for a wrong key, `retryLater` when throttled.
    func checkAdminKey(_ key: String, clientAddress: String?) async throws {
        let keys = ThrottleKeys.adminKey(address: clientAddress)
        let matches = SessionToken.hash(key) == adminKeyHash
        try await throttle.check(hard: keys, matches: matches)
        guard matches else {
            await cluster.send(.loginFailed(keys: keys))
            throw RooftopError(.auth, "the admin key is wrong")
        }
    }

    /// Counts log-ins made through another server process against the throttle.
    func noteLogIns(failed: Bool, keys: [String]) async {
        if failed { await throttle.recordFailure(keys) } else { await throttle.recordSuccess(keys) }
    }

    /// A caller and the session it used, if any.
    struct Authenticated: Sendable {
        var context: AccessContext
        var session: LiveHub.SessionMark?
    }

    /// The caller described by a session token and/or admin key.
    /// - Throws: `auth` for an unknown, revoked or expired session or a wrong admin key,
    ///   `retryLater` when the admin key is throttled for `clientAddress`.
    func context(sessionToken: String?, adminKey: String?, clientAddress: String?) async throws -> AccessContext {
        try await authenticate(sessionToken: sessionToken, adminKey: adminKey, clientAddress: clientAddress).context
    }

    /// The caller described by a session token and/or admin key, with its session. An admin key
    /// is checked through ``checkAdminKey(_:clientAddress:)``, throttled per client address.
    /// - Throws: `auth` for an unknown, revoked or expired session or a wrong admin key,
    ///   `retryLater` when the admin key is throttled for `clientAddress`.
    func authenticate(sessionToken: String?, adminKey: String?, clientAddress: String?) async throws -> Authenticated {
        if let adminKey {
            try await checkAdminKey(adminKey, clientAddress: clientAddress)
            return Authenticated(context: .admin, session: nil)
        }
        guard let sessionToken else { return Authenticated(context: .anonymous, session: nil) }
        let hash = SessionToken.hash(sessionToken)
        guard let session = try await storage.session(tokenHash: hash) else {
            throw RooftopError(.auth, "the session is invalid or was revoked; log in again")
        }
        guard session.expiresAt > clock.now() else {
            throw RooftopError(.auth, "the session expired; log in again")
        }
        let context = AccessContext(
            userId: session.userId, roles: try await roles.effectiveRoles(ofUser: session.userId))
        return Authenticated(context: context, session: .init(hash: hash, expiresAt: session.expiresAt))
    }

    /// The public description of a user, with effective roles.
    func userInfo(_ user: UserRecord) async throws -> UserInfo {
        UserInfo(
            objectId: user.id, username: user.username, email: user.email,
            roles: try await roles.effectiveRoles(ofUser: user.id).sorted(), createdAt: user.createdAt)
    }

    private func startSession(for user: UserRecord) async throws -> Session {
        let token = SessionToken.generate()
        let now = clock.now()
        let expiresAt = Timestamp(
            millisecondsSinceEpoch: now.millisecondsSinceEpoch.addingSaturating(sessionLifetime.saturatingMilliseconds))
        try await storage.insertSession(
            SessionRecord(tokenHash: SessionToken.hash(token), userId: user.id, createdAt: now, expiresAt: expiresAt))
        return Session(user: try await userInfo(user), sessionToken: token, expiresAt: expiresAt)
    }

    private func hashPassword(_ password: String) async throws -> String {
        let cost = bcryptCost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(AuthService.prehash(password), cost: cost) }
    }

    private func verifyPassword(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(AuthService.prehash(password), hash: hash) }
    }

    /// The base64 SHA-256 of a password: 44 bytes, within bcrypt's 72-byte input.
    static func prehash(_ password: String) -> String {
        Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }
}
