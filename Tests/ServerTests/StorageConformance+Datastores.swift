import RooftopShared
import Testing

@testable import RooftopServer

extension StorageConformance {
    /// Private datastores belong to their owner (two users each get their own `default`);
    /// shareable IDs and `:app` name one datastore for everybody; opening again returns the
    /// same one.
    static func datastoreScopes(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let alice = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: "Alice's")
            let bob = try await storage.openOrCreateDatastore(id: .default, ownerId: "u2", title: nil)
            #expect(alice.key != bob.key)
            #expect(alice.ownerId == "u1" && bob.ownerId == "u2")
            #expect(alice.id == .default && alice.title == "Alice's")
            #expect(alice.sequence == 0 && alice.recordCount == 0)
            #expect(alice.sizeBytes == SizeAccounting.datastoreBaseBytes)
            #expect(try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: "ignored") == alice)
            #expect(try await storage.datastore(id: .default, ownerId: "u2") == bob)
            #expect(try await storage.datastore(id: .default, ownerId: "u3") == nil)
            #expect(try await storage.datastore(key: alice.key) == alice)

            let shareableId = try DatastoreID(".SharedListAbc")
            let shared = try await storage.openOrCreateDatastore(id: shareableId, ownerId: "u1", title: "List")
            #expect(shared.ownerId == "u1")
            // Shareable IDs are global: another user opening it gets the same datastore, still
            // owned by its creator.
            #expect(try await storage.openOrCreateDatastore(id: shareableId, ownerId: "u2", title: nil) == shared)
            #expect(try await storage.datastore(id: shareableId, ownerId: "u2") == shared)
            #expect(try await storage.datastore(id: shareableId, ownerId: nil) == shared)

            let app = try await storage.openOrCreateDatastore(id: .app, ownerId: "u1", title: nil)
            #expect(app.ownerId == nil, ":app has no owner")
            #expect(try await storage.openOrCreateDatastore(id: .app, ownerId: "u2", title: nil) == app)
            #expect(Set([alice.key, bob.key, shared.key, app.key]).count == 4)

            let owned = try await storage.datastores(ownedBy: "u1", sharedWith: ["*", "u1"])
            #expect(Set(owned.map(\.key)) == [alice.key, shared.key])

            // Devices opening the same new datastore at once get one datastore.
            let keys = try await withThrowingTaskGroup(of: Int64.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await storage.openOrCreateDatastore(id: .default, ownerId: "u9", title: nil).key
                    }
                }
                return try await group.reduce(into: Set<Int64>()) { $0.insert($1) }
            }
            #expect(keys.count == 1)
        }
    }

    /// Sharing roles are set, changed and cleared; the datastores a user sees follow them.
    static func datastoreRoles(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let id = try DatastoreID(".Shared1")
            let shared = try await storage.openOrCreateDatastore(id: id, ownerId: "u1", title: nil)
            _ = try await storage.openOrCreateDatastore(id: .default, ownerId: "u2", title: nil)
            try await storage.setRole(.viewer, for: .user("u2"), datastoreKey: shared.key)
            try await storage.setRole(.editor, for: .role("Team"), datastoreKey: shared.key)
            try await storage.setRole(.viewer, for: .everyone, datastoreKey: shared.key)
            #expect(
                try await storage.datastore(key: shared.key)?.roles == [
                    .user("u2"): .viewer, .role("Team"): .editor, .everyone: .viewer,
                ])
            try await storage.setRole(.editor, for: .user("u2"), datastoreKey: shared.key)
            try await storage.setRole(.none, for: .everyone, datastoreKey: shared.key)
            let record = try await storage.datastore(key: shared.key)
            #expect(record?.roles == [.user("u2"): .editor, .role("Team"): .editor])
            #expect(record?.sharing?.role(for: .user("u2")) == .editor)

            let visibleToBob = try await storage.datastores(ownedBy: "u2", sharedWith: ["*", "u2"])
            #expect(visibleToBob.map(\.id).sorted() == [id, .default].sorted())
            let visibleToCarol = try await storage.datastores(ownedBy: "u3", sharedWith: ["*", "u3", "role:Team"])
            #expect(visibleToCarol.map(\.key) == [shared.key])
            // Lists carry each datastore's roles as a read by key does.
            let sharedRoles: [Principal: SharingRole] = [.user("u2"): .editor, .role("Team"): .editor]
            #expect(visibleToBob.first { $0.key == shared.key }?.roles == sharedRoles)
            #expect(visibleToBob.first { $0.key != shared.key }?.roles == [:])
            #expect(visibleToCarol.first?.roles == sharedRoles)
            let all = try await storage.allDatastores(afterKey: 0, limit: 100)
            #expect(all.first { $0.key == shared.key }?.roles == sharedRoles)

            try await storage.setRole(.none, for: .user("u2"), datastoreKey: shared.key)
            try await storage.setRole(.none, for: .role("Team"), datastoreKey: shared.key)
            #expect(try await storage.datastore(key: shared.key)?.roles == [:])
            #expect(try await storage.datastores(ownedBy: "u2", sharedWith: ["*", "u2"]).map(\.id) == [.default])
            #expect(try await storage.datastores(ownedBy: "u3", sharedWith: ["*", "u3", "role:Team"]).isEmpty)
        }
    }

    /// Deleting a datastore deletes its objects, change feed and roles, and nothing of other
    /// datastores.
    static func datastoreDeletion(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let kept = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            // Created last, so it has the highest key: a backend that hands out max(key) + 1
            // would give the deleted key to the next datastore.
            let doomed = try await storage.openOrCreateDatastore(
                id: try DatastoreID(".Doomed"), ownerId: "u1", title: nil)
            try await storage.setRole(.viewer, for: .user("u2"), datastoreKey: doomed.key)
            for objectId in ["a", "b"] {
                try await StorageWrites.put(
                    object(objectId, in: doomed.id, fields: ["x": 1]), datastoreKey: doomed.key, into: storage)
                try await StorageWrites.put(
                    object(objectId, in: kept.id, fields: ["x": 2]), datastoreKey: kept.key, into: storage)
            }
            try await storage.deleteDatastore(key: doomed.key)

            #expect(try await storage.datastore(key: doomed.key) == nil)
            #expect(try await storage.datastore(id: doomed.id, ownerId: "u1") == nil)
            #expect(try await storage.object(datastoreKey: doomed.key, className: "T", objectId: "a") == nil)
            #expect(try await storage.changes(datastoreKey: doomed.key, after: 0, limit: 10, classes: nil).isEmpty)
            #expect(try await storage.changeCount(datastoreKey: doomed.key, after: 0, classes: nil, readers: nil) == 0)
            #expect(try await storage.count(Query("T"), datastoreKey: doomed.key, readers: nil) == 0)
            #expect(
                try await storage.operations(datastoreKey: doomed.key, className: "T", objectId: "a", after: 0).isEmpty)
            #expect(try await storage.datastores(ownedBy: "u2", sharedWith: ["*", "u2"]).isEmpty)
            let orphan = await throwsCode(.notFound) {
                _ = try await write(storage, datastoreKey: doomed.key, objectId: "c", base: nil) { _ in
                    StorageWrites.decision(object("c", in: doomed.id), deleted: false)
                }
            }
            #expect(orphan, "writing into a deleted datastore fails with notFound")

            #expect(try await storage.count(Query("T"), datastoreKey: kept.key, readers: nil) == 2)
            #expect(
                try await storage.object(datastoreKey: kept.key, className: "T", objectId: "a")?.snapshot.fields == [
                    "x": 2
                ])
            #expect(try await storage.datastore(key: kept.key)?.recordCount == 2)

            // The ID is free again, for a new, empty datastore with a new key: checkpoints carry
            // the key, so a reused one would let a client resume the old datastore's feed in the
            // new one and miss its first changes.
            let again = try await storage.openOrCreateDatastore(id: doomed.id, ownerId: "u1", title: nil)
            #expect(again.key != doomed.key, "a datastore key must never be reused")
            #expect(again.recordCount == 0 && again.sequence == 0 && again.roles.isEmpty)
            #expect(try await storage.object(datastoreKey: again.key, className: "T", objectId: "a") == nil)
        }
    }
}
