import RooftopShared
import Testing

@testable import RooftopServer

extension StorageConformance {
    /// Users: stored and found by ID and user name, a name under any look-alike of it (same key);
    /// a taken user name, or a look-alike of one, is refused with `exists`.
    static func users(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let alice = user("u1", "alice", email: "alice@example.com")
            try await storage.insertUser(alice)
            try await storage.insertUser(user("u2", "bob"))
            #expect(try await storage.user(id: "u1") == alice)
            #expect(try await storage.user(logInName: "alice") == alice)
            #expect(try await storage.user(logInName: "bob")?.email == nil)
            #expect(try await storage.user(id: "nobody") == nil)
            #expect(try await storage.user(logInName: "nobody") == nil)
            for lookAlike in ["Alice", "ALICE", "\u{FF41}lice", "al\u{AD}ice"] {
                #expect(try await storage.user(logInName: lookAlike)?.id == "u1", "log-in as \(lookAlike)")
            }

            let taken = await throwsCode(.exists) { try await storage.insertUser(user("u3", "alice")) }
            #expect(taken, "a second 'alice' must be refused with 'exists'")
            for (id, lookAlike) in [("u4", "Alice"), ("u5", "\u{FF41}lice"), ("u6", "BOB")] {
                let refused = await throwsCode(.exists) { try await storage.insertUser(user(id, lookAlike)) }
                #expect(refused, "\(lookAlike) looks like a taken name: refused with 'exists'")
                #expect(try await storage.user(id: id) == nil, "the refused \(lookAlike) must not be stored")
            }
            #expect(try await storage.user(id: "u3") == nil, "the refused user must not be stored")
            #expect(try await storage.user(logInName: "alice")?.id == "u1")

            // Canonically equivalent names are one name: é precomposed, or e and U+0301.
            try await storage.insertUser(user("u7", "ren\u{E9}e"))
            #expect(await throwsCode(.exists) { try await storage.insertUser(user("u8", "rene\u{301}e")) })
            #expect(try await storage.user(logInName: "rene\u{301}e")?.id == "u7")
            #expect(try await storage.user(logInName: "REN\u{C9}E")?.id == "u7")

            // Racing sign-ups for one name: exactly one wins, the others get 'exists'.
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        do {
                            try await storage.insertUser(user("racer\(index)", "carol"))
                            return true
                        } catch let error as RooftopError where error.code == .exists {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)

            // Racing sign-ups for look-alikes of one name: exactly one wins.
            let lookAlikes = ["dave", "Dave", "DAVE", "\u{FF44}ave", "d\u{200B}ave", "dAvE"]
            let lookAlikeOutcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for (index, name) in lookAlikes.enumerated() {
                    group.addTask {
                        do {
                            try await storage.insertUser(user("dave\(index)", name))
                            return true
                        } catch let error as RooftopError where error.code == .exists {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(lookAlikeOutcomes.filter { $0 }.count == 1)
        }
    }

    /// Sessions: stored by token hash; deleting expired ones removes exactly those that expired
    /// before the time given; log-out deletes one.
    static func sessions(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            try await storage.insertUser(user("u1", "alice"))
            let sessions = [
                SessionRecord(tokenHash: "h1", userId: "u1", createdAt: time(0), expiresAt: time(1_000)),
                SessionRecord(tokenHash: "h2", userId: "u1", createdAt: time(0), expiresAt: time(5_000)),
                SessionRecord(tokenHash: "h3", userId: "u1", createdAt: time(0), expiresAt: time(9_000)),
            ]
            for session in sessions { try await storage.insertSession(session) }
            #expect(try await storage.session(tokenHash: "h2") == sessions[1])
            #expect(try await storage.session(tokenHash: "nope") == nil)

            // Strictly before: the session expiring exactly at the time stays.
            #expect(try await storage.deleteSessions(expiredBefore: time(5_000)) == 1)
            #expect(try await storage.session(tokenHash: "h1") == nil)
            #expect(try await storage.session(tokenHash: "h2") == sessions[1])
            #expect(try await storage.deleteSessions(expiredBefore: time(5_000)) == 0)
            #expect(try await storage.deleteSessions(expiredBefore: time(10_000)) == 2)
            #expect(try await storage.session(tokenHash: "h3") == nil)

            try await storage.insertSession(sessions[0])
            try await storage.deleteSession(tokenHash: "h1")
            #expect(try await storage.session(tokenHash: "h1") == nil)
        }
    }

    /// Dashboard sessions: found by hash until ended one by one or all together; inserting one
    /// removes those expired.
    static func dashboardSessions(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            try await storage.insertDashboardSession(tokenHash: "d1", expiresAt: time(1_000), now: time(0))
            try await storage.insertDashboardSession(tokenHash: "d2", expiresAt: time(9_000), now: time(0))
            #expect(try await storage.dashboardSessionExpiry(tokenHash: "d1") == time(1_000))
            #expect(try await storage.dashboardSessionExpiry(tokenHash: "nope") == nil)
            try await storage.insertDashboardSession(tokenHash: "d3", expiresAt: time(9_000), now: time(2_000))
            #expect(try await storage.dashboardSessionExpiry(tokenHash: "d1") == nil, "expired, removed")
            try await storage.deleteDashboardSession(tokenHash: "d2")
            #expect(try await storage.dashboardSessionExpiry(tokenHash: "d2") == nil)
            #expect(try await storage.dashboardSessionExpiry(tokenHash: "d3") == time(9_000))
            #expect(try await storage.deleteDashboardSessions() == 1)
            #expect(try await storage.dashboardSessionExpiry(tokenHash: "d3") == nil)
        }
    }

    /// Administration: users listed in byte order of their names, page by page; a user's sessions
    /// listed newest first and deleted together (others' stay); a password hash replaced.
    static func userAdministration(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            // Byte order: "B" < "a" < "c" < "é" (a case-insensitive or locale order would differ).
            for (id, name) in [("u1", "c"), ("u2", "a"), ("u3", "é"), ("u4", "B")] {
                try await storage.insertUser(user(id, name))
            }
            #expect(try await storage.users(after: nil, limit: 10).map(\.username) == ["B", "a", "c", "é"])
            #expect(try await storage.users(after: nil, limit: 2).map(\.username) == ["B", "a"])
            #expect(try await storage.users(after: "a", limit: 2).map(\.username) == ["c", "é"])
            #expect(try await storage.users(after: "é", limit: 2).isEmpty)

            let sessions = [
                SessionRecord(tokenHash: "h1", userId: "u1", createdAt: time(1_000), expiresAt: time(9_000)),
                SessionRecord(tokenHash: "h2", userId: "u1", createdAt: time(2_000), expiresAt: time(9_000)),
                SessionRecord(tokenHash: "h3", userId: "u2", createdAt: time(3_000), expiresAt: time(9_000)),
            ]
            for session in sessions { try await storage.insertSession(session) }
            #expect(try await storage.sessions(userId: "u1") == [sessions[1], sessions[0]])
            #expect(try await storage.sessions(userId: "nobody").isEmpty)
            #expect(Set(try await storage.deleteSessions(userId: "u1")) == ["h1", "h2"])
            #expect(try await storage.sessions(userId: "u1").isEmpty)
            #expect(try await storage.session(tokenHash: "h3") == sessions[2], "another user's session stays")
            #expect(try await storage.deleteSessions(userId: "u1").isEmpty)

            #expect(try await storage.setPasswordHash("new-hash", userId: "u2"))
            #expect(try await storage.user(id: "u2")?.passwordHash == "new-hash")
            #expect(try await storage.setPasswordHash("x", userId: "nobody") == false)
        }
    }

    /// Administration: every datastore listed in key order, page by page; a datastore's classes;
    /// the counts of users, datastores and objects.
    static func datastoreAdministration(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            #expect(try await storage.statistics() == StorageStatistics(users: 0, datastores: 0, objects: 0))
            try await storage.insertUser(user("u1", "alice"))
            let app = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
            let mine = try await storage.openOrCreateDatastore(id: try DatastoreID("default"), ownerId: "u1", title: "Mine")
            let all = try await storage.allDatastores(afterKey: 0, limit: 10)
            #expect(all.map(\.key) == [app.key, mine.key].sorted())
            #expect(try await storage.allDatastores(afterKey: 0, limit: 1).map(\.key) == [min(app.key, mine.key)])
            #expect(try await storage.allDatastores(afterKey: max(app.key, mine.key), limit: 10).isEmpty)
            for (className, objectId) in [("Zebra", "z1"), ("Apple", "a1"), ("Apple", "a2")] {
                _ = try await write(storage, datastoreKey: app.key, objectId: objectId, className: className, base: nil) { _ in
                    StorageWrites.decision(object(objectId, in: .app, className: className), deleted: false)
                }
            }
            #expect(try await storage.classNames(datastoreKey: app.key) == ["Apple", "Zebra"])
            #expect(try await storage.classNames(datastoreKey: mine.key).isEmpty)
            #expect(try await storage.statistics() == StorageStatistics(users: 1, datastores: 2, objects: 3))
        }
    }

    /// Roles: stored with members; a taken name is refused; membership updates add and remove
    /// users and child roles; the role graph gives effective roles through child roles; deleting
    /// a role removes it from its parents too.
    static func roles(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let members = RoleRecord(name: "Members", acl: .only("u1"), users: ["u1", "u2"])
            try await storage.insertRole(members)
            try await storage.insertRole(RoleRecord(name: "Moderators", acl: ACL(), users: ["u3"]))
            #expect(try await storage.role(named: "Members") == members)
            #expect(try await storage.role(named: "Nobody") == nil)
            let taken = await throwsCode(.exists) {
                try await storage.insertRole(RoleRecord(name: "Members", acl: .only("u9")))
            }
            #expect(taken)
            #expect(try await storage.role(named: "Members")?.acl == .only("u1"))

            // Moderators are members too.
            let changed = try await storage.updateRole(
                named: "Members", addUsers: ["u4"], removeUsers: ["u1"], addRoles: ["Moderators"], removeRoles: [])
            #expect(
                changed == RoleRecord(name: "Members", acl: .only("u1"), users: ["u2", "u4"], childRoles: ["Moderators"]))
            #expect(try await storage.role(named: "Members") == changed)
            // Adding an existing member again and removing a non-member change nothing.
            let same = try await storage.updateRole(
                named: "Members", addUsers: ["u2"], removeUsers: ["u9"], addRoles: [], removeRoles: ["Other"])
            #expect(same == changed)
            let missing = await throwsCode(.notFound) {
                _ = try await storage.updateRole(
                    named: "Ghosts", addUsers: ["u1"], removeUsers: [], addRoles: [], removeRoles: [])
            }
            #expect(missing)
            #expect(try await storage.role(named: "Ghosts") == nil)

            let graph = try await storage.roleGraph()
            #expect(graph.users["Members"] == ["u2", "u4"])
            #expect(graph.childRoles["Members"] == ["Moderators"])
            #expect(graph.effectiveRoles(ofUser: "u3") == ["Members", "Moderators"])
            #expect(graph.effectiveRoles(ofUser: "u2") == ["Members"])
            #expect(graph.effectiveRoles(ofUser: "u1").isEmpty)

            try await storage.deleteRole(named: "Moderators")
            #expect(try await storage.role(named: "Moderators") == nil)
            #expect(try await storage.role(named: "Members")?.childRoles == [])
            let after = try await storage.roleGraph()
            #expect(after.roleNames == ["Members"])
            #expect(after.effectiveRoles(ofUser: "u3").isEmpty)
        }
    }

    /// A deleted role's name stays reserved: a new role of that name (which would inherit every
    /// grant naming `role:<name>`) is refused with `exists`; deleting a role that does not exist
    /// reserves nothing.
    static func retiredRoleNames(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            try await storage.insertRole(RoleRecord(name: "Editors", acl: .only("u1"), users: ["u1"]))
            try await storage.deleteRole(named: "Editors")
            #expect(try await storage.role(named: "Editors") == nil)
            let reserved = await throwsCode(.exists) {
                try await storage.insertRole(RoleRecord(name: "Editors", acl: .only("u9"), users: ["u9"]))
            }
            #expect(reserved, "a deleted role's name is not free again")
            #expect(try await storage.role(named: "Editors") == nil)
            #expect(try await storage.roleGraph().effectiveRoles(ofUser: "u9").isEmpty)
            // Deleting an unknown role reserves nothing; names stay case-sensitive.
            try await storage.deleteRole(named: "Ghosts")
            try await storage.insertRole(RoleRecord(name: "Ghosts", acl: ACL()))
            try await storage.insertRole(RoleRecord(name: "editors", acl: ACL()))
            // Deleted twice (two servers at once): still one reservation, no error.
            try await storage.deleteRole(named: "Ghosts")
            try await storage.deleteRole(named: "Ghosts")
            let again = await throwsCode(.exists) { try await storage.insertRole(RoleRecord(name: "Ghosts", acl: ACL())) }
            #expect(again)
        }
    }

    /// Settings and secrets: a secret is made once and then always the same; settings are
    /// stored and replaced.
    static func settings(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let made = CallCounter()
            let first = try await storage.secret(named: "checkpoint") {
                made.increment()
                return [1, 2, 3, 0, 255]
            }
            let second = try await storage.secret(named: "checkpoint") {
                made.increment()
                return [9]
            }
            #expect(first == [1, 2, 3, 0, 255])
            #expect(second == first)
            #expect(made.count == 1)
            #expect(try await storage.setting(named: "mode") == nil)
            try await storage.setSetting(named: "mode", to: "réglé ✓")
            try await storage.setSetting(named: "other", to: "x")
            try await storage.setSetting(named: "mode", to: "second")
            #expect(try await storage.setting(named: "mode") == "second")
            #expect(try await storage.setting(named: "other") == "x")
        }
    }
}
