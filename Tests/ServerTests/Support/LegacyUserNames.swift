import Logging
import RooftopShared
import Testing

@testable import RooftopServer

/// The users a server made before names had keys, when look-alikes could still sign up: the
/// migration to keys (SQLite v9, PostgreSQL v5) must keep them all, each able to log in, and
/// refuse new look-alikes. Each backend's migration test writes ``users`` in its old schema,
/// migrates, and runs ``check(_:keys:)``.
enum LegacyUserNames {
    /// ID, name and creation time (ms), written out of creation order on purpose.
    static let users: [(id: String, username: String, createdAt: Int64)] = [
        ("u3", "bob", 3_000), ("u1", "Bob", 1_000), ("u2", "BOB", 2_000),
        // Alone, not in NFC: rewritten in NFC.
        ("u4", "Zoe\u{308}", 4_000),
        // One name in two Unicode forms: the older keeps its bytes (the NFC form is the other's).
        ("u5", "E\u{301}mile", 5_000), ("u6", "\u{C9}mile", 6_000),
        ("u7", "carol", 7_000),
    ]

    /// The names and keys the migration must leave.
    static let expected: [String: (username: String, key: String)] = [
        "u1": ("Bob", "bob"), "u2": ("BOB", "bob\u{1F}u2"), "u3": ("bob", "bob\u{1F}u3"),
        "u4": ("Zo\u{EB}", "zoe\u{308}"), "u5": ("E\u{301}mile", "e\u{301}mile"),
        "u6": ("\u{C9}mile", "e\u{301}mile\u{1F}u6"), "u7": ("carol", "carol"),
    ]

    /// Checks a migrated storage: names and keys (`keys`: the stored name key of each user, read
    /// by the backend's SQL), who each log-in name finds, log-ins with passwords through
    /// ``AuthService``, and sign-ups of look-alikes refused with `exists`.
    static func check(_ storage: any Storage, keys: [String: String]) async throws {
        for (id, expected) in expected {
            let stored = try #require(try await storage.user(id: id), "\(id) was lost")
            #expect(Array(stored.username.utf8) == Array(expected.username.utf8), "\(id)'s name")
            #expect(keys[id].map { Array($0.utf8) } == Array(expected.key.utf8), "\(id)'s key")
        }
        // The exact name first, then its NFC form, then the key.
        for (name, id) in [
            ("Bob", "u1"), ("BOB", "u2"), ("bob", "u3"), ("bOB", "u1"), ("Zoe\u{308}", "u4"), ("Zo\u{EB}", "u4"),
            ("ZO\u{CB}", "u4"), ("E\u{301}mile", "u5"), ("\u{C9}mile", "u6"), ("\u{E9}mile", "u5"), ("CAROL", "u7"),
        ] {
            #expect(try await storage.user(logInName: name)?.id == id, "log-in as \(name)")
        }

        var configuration = ServerConfiguration()
        configuration.bcryptCost = 4
        let cluster = ClusterLink(storage: storage, logger: Logger(label: "legacy-user-names"))
        let auth = AuthService(
            storage: storage, roles: RoleDirectory(storage: storage), live: LiveHub(clock: configuration.clock),
            configuration: configuration, adminKeyHash: SessionToken.hash("legacy-admin-key"), cluster: cluster)
        for (id, username, _) in users {
            try await auth.setPassword(SetPasswordRequest(password: "password-of-\(id)"), userId: id)
            let session = try await auth.logIn(
                LogInRequest(username: username, password: "password-of-\(id)"), clientAddress: "10.7.0.1")
            #expect(session.user.objectId == id, "\(id) logs in by its exact name")
        }
        for lookAlike in ["bOb", "zo\u{EB}", "\u{E9}MILE", "Carol"] {
            let refused = await StorageConformance.throwsCode(.exists) {
                _ = try await auth.signUp(SignUpRequest(username: lookAlike, password: "password-1"))
            }
            #expect(refused, "a new \(lookAlike) is refused with exists")
        }
        let dave = try await auth.signUp(SignUpRequest(username: "Dave", password: "password-1"))
        #expect(try await storage.user(logInName: "DAVE")?.id == dave.user.objectId)
    }
}
