import RooftopShared
import Testing

@testable import RooftopServer

extension StorageConformance {
    /// Everything written survives closing the storage and opening the same place again: users,
    /// sessions, roles, settings and secrets, class settings, datastores with counters and roles,
    /// objects and tombstones with reader history, operations, the change feed, recorded
    /// mutation results and the query indexes.
    static func durability(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, fixture in
            try await storage.insertUser(user("u1", "alice"))
            let session = SessionRecord(tokenHash: "h1", userId: "u1", createdAt: time(0), expiresAt: time(100_000))
            try await storage.insertSession(session)
            let role = RoleRecord(name: "R", acl: .only("u1"), users: ["u1"], childRoles: ["S"])
            try await storage.insertRole(role)
            let secret = try await storage.secret(named: "signing") { [7, 7, 7] }
            try await storage.setSetting(named: "name", to: "value")
            let settings = ClassSettings(className: "T", mergeRules: ["n": .max])
            try await storage.saveClassSettings(settings)

            let shared = try await storage.openOrCreateDatastore(
                id: try DatastoreID(".Durable"), ownerId: "u1", title: "D")
            try await storage.setRole(.editor, for: .role("R"), datastoreKey: shared.key)
            let a1 = object(
                "a", in: shared.id,
                fields: ["name": "x\u{0}y", "loc": .geoPoint(try GeoPoint(latitude: 1, longitude: 2))],
                acl: readable(by: .user("u1")))
            let a2 = updated(a1, ["n": 2.5], acl: readable(by: .role("R")))
            let b1 = object("b", in: shared.id, fields: ["n": 1])
            try await StorageWrites.put(a1, datastoreKey: shared.key, into: storage)
            try await StorageWrites.put(a2, datastoreKey: shared.key, into: storage)
            try await StorageWrites.put(b1, datastoreKey: shared.key, into: storage)
            try await StorageWrites.put(
                StorageWrites.tombstone(of: b1), deleted: true, datastoreKey: shared.key, into: storage)
            let mutation = try MutationID("durable-1")
            let first = try await write(
                storage, datastoreKey: shared.key, objectId: "c", base: nil, mutation: ("u1", mutation)
            ) { _ in
                StorageWrites.decision(object("c", in: shared.id), deleted: false)
            }

            let datastoreBefore = try await storage.datastore(key: shared.key)
            let changesBefore = try await storage.changes(datastoreKey: shared.key, after: 0, limit: 100, classes: nil)
            let operationsBefore = try await storage.operations(
                datastoreKey: shared.key, className: "T", objectId: "a", after: 0)
            try await storage.close()

            let reopened = try await fixture.open()
            do {
                #expect(try await reopened.user(logInName: "alice") == user("u1", "alice"))
                #expect(try await reopened.session(tokenHash: "h1") == session)
                #expect(try await reopened.role(named: "R") == role)
                #expect(try await reopened.secret(named: "signing") { [1] } == secret)
                #expect(try await reopened.setting(named: "name") == "value")
                #expect(try await reopened.classSettings(named: "T") == settings)
                #expect(try await reopened.datastore(key: shared.key) == datastoreBefore)
                #expect(datastoreBefore?.recordCount == 2 && datastoreBefore?.roles == [.role("R"): .editor])
                #expect(try await reopened.datastore(id: shared.id, ownerId: nil)?.key == shared.key)
                #expect(
                    try await reopened.changes(datastoreKey: shared.key, after: 0, limit: 100, classes: nil)
                        == changesBefore)
                #expect(changesBefore.count == 3)
                #expect(
                    try await reopened.operations(datastoreKey: shared.key, className: "T", objectId: "a", after: 0)
                        == operationsBefore)
                #expect(operationsBefore.count == 2)
                let replay = try await write(
                    reopened, datastoreKey: shared.key, objectId: "c", base: nil, mutation: ("u1", mutation)
                ) { _ in
                    .reject(RooftopError(.internal, "must not be called"))
                }
                if case .written(_, _, let result) = first {
                    #expect(replay.replayed == result)
                } else {
                    Issue.record("the first write of c gave \(first)")
                }
                let page = try await reopened.find(
                    Query("T").where(Field("name").startsWith("x\u{0}")), datastoreKey: shared.key,
                    readers: ["*", "u2", "role:R"],
                    limit: 10)
                #expect(page.objects == [a2] && page.totalCount == 1)
                #expect(
                    try await reopened.lostAccess(
                        datastoreKey: shared.key, atSequence: 1, formerPrincipals: ["*", "u1"],
                        currentPrincipals: ["*", "u1"]
                    ).isEmpty)
                try await reopened.close()
            } catch {
                try? await reopened.close()
                throw error
            }
        }
    }
}
