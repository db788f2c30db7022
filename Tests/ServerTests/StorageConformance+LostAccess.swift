import RooftopShared
import Testing

@testable import RooftopServer

extension StorageConformance {
    /// After a principal set change (a user leaves a role), `lostAccess` lists the live objects,
    /// unchanged since the checkpoint, that the user could read then through the old principals
    /// and cannot read now: not public ones, not ones readable some other way, not deleted ones,
    /// not ones never readable, and not ones changed since (the change feed reports those).
    static func lostAccessAfterPrincipalChange(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            let objects = [
                object("viaRole", acl: readable(by: .role("R1"))),
                object("public"),
                object("direct", acl: readable(by: .user("u3"), .role("R1"))),
                object("otherRole", acl: readable(by: .role("R1"), .role("R2"))),
                object("deleted", acl: readable(by: .role("R1"))),
                object("never", acl: readable(by: .user("u1"))),
                object("viaRole2", className: "U", acl: readable(by: .role("R1"))),
            ]
            for snapshot in objects { try await StorageWrites.put(snapshot, datastoreKey: key, into: storage) }
            try await StorageWrites.put(
                StorageWrites.tombstone(of: objects[4]), deleted: true, datastoreKey: key, into: storage)
            let checkpoint = try #require(try await storage.datastore(key: key)).sequence
            try await StorageWrites.put(
                object("later", acl: readable(by: .role("R1"))), datastoreKey: key, into: storage)

            let former: Set<String> = ["*", "u3", "role:R1", "role:R2"]
            let lost = try await storage.lostAccess(
                datastoreKey: key, atSequence: checkpoint, formerPrincipals: former,
                currentPrincipals: ["*", "u3", "role:R2"])
            #expect(
                lost == [Pointer(className: "T", objectId: "viaRole"), Pointer(className: "U", objectId: "viaRole2")])
            let all = try await storage.lostAccess(
                datastoreKey: key, atSequence: checkpoint, formerPrincipals: former, currentPrincipals: ["*"])
            #expect(Set(all.map(\.objectId)) == ["viaRole", "viaRole2", "direct", "otherRole"])
            #expect(
                try await storage.lostAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: former, currentPrincipals: former
                ).isEmpty)
            #expect(
                try await storage.lostAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: [], currentPrincipals: ["*"]
                ).isEmpty)
            #expect(
                try await storage.lostAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: former, currentPrincipals: []
                ).count == 5,
                "with no current principals everything once readable (public too) is lost")
        }
    }

    /// ACL changes and `lostAccess`: an object whose ACL changed after the checkpoint is left to
    /// the change feed (which carries its former readers); one that changed before the
    /// checkpoint is judged by its readers at the checkpoint, from the reader history.
    static func lostAccessAfterACLChange(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            let x1 = object("x", acl: readable(by: .user("u1"), .role("R")))
            let y1 = object("y", acl: readable(by: .role("R")))
            try await StorageWrites.put(x1, datastoreKey: key, into: storage)
            try await StorageWrites.put(y1, datastoreKey: key, into: storage)
            let before = try #require(try await storage.datastore(key: key)).sequence  // 2

            // y: R loses read, u2 gains it (sequence 3).
            try await StorageWrites.put(
                updated(y1, [:], acl: readable(by: .user("u2"))), datastoreKey: key, into: storage)
            let after = try #require(try await storage.datastore(key: key)).sequence  // 3

            // From the earlier checkpoint, y changed since: it is not listed here...
            let fromBefore = try await storage.lostAccess(
                datastoreKey: key, atSequence: before, formerPrincipals: ["*", "u9", "role:R"],
                currentPrincipals: ["*", "u9"])
            #expect(fromBefore.map(\.objectId) == ["x"])
            // ...but the feed has it, with R among its former readers so the pull can remove it.
            let feed = try await storage.changes(datastoreKey: key, after: before, limit: 10, classes: nil)
            #expect(feed.map(\.objectId) == ["y"])
            #expect(feed.first?.readers == ["u2"])
            #expect(feed.first?.formerReaders == ["u2", "role:R"])

            // From the later checkpoint, R could no longer read y, so leaving R loses only x.
            let fromAfter = try await storage.lostAccess(
                datastoreKey: key, atSequence: after, formerPrincipals: ["*", "u9", "role:R"],
                currentPrincipals: ["*", "u9"])
            #expect(fromAfter.map(\.objectId) == ["x"])
            // u1 still reads x directly; u2 gained y and lost nothing.
            #expect(
                try await storage.lostAccess(
                    datastoreKey: key, atSequence: after, formerPrincipals: ["*", "u1", "role:R"],
                    currentPrincipals: ["*", "u1"]
                ).isEmpty)
            #expect(
                try await storage.lostAccess(
                    datastoreKey: key, atSequence: after, formerPrincipals: ["*", "u2"], currentPrincipals: ["*", "u2"]
                ).isEmpty)

            // Re-granted after being taken away: readable at the later checkpoint again.
            let y3 = updated(
                updated(y1, [:], acl: readable(by: .user("u2"))), [:], acl: readable(by: .user("u2"), .role("R")))
            try await StorageWrites.put(y3, datastoreKey: key, into: storage)
            let regranted = try #require(try await storage.datastore(key: key)).sequence  // 4
            let fromRegranted = try await storage.lostAccess(
                datastoreKey: key, atSequence: regranted, formerPrincipals: ["*", "u9", "role:R"],
                currentPrincipals: ["*", "u9"])
            #expect(fromRegranted.map(\.objectId) == ["x", "y"])
        }
    }
}

extension StorageConformance {
    /// A caller holding 70,000 roles (beyond SQLite's default 32,766 bound variables and PostgreSQL's 65,535) gets exact
    /// answers from every read filtered by principals: queries, counts, the change count, lost
    /// and gained access and the datastores shared with it. A small set gives the same answers.
    static func manyPrincipals(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            try await StorageWrites.put(object("mine", acl: readable(by: .role("R39999"))), datastoreKey: key, into: storage)
            try await StorageWrites.put(object("plus", acl: readable(by: .user("u+q/="))), datastoreKey: key, into: storage)
            try await StorageWrites.put(object("other", acl: readable(by: .user("u2"))), datastoreKey: key, into: storage)
            let shared = try await storage.openOrCreateDatastore(id: try DatastoreID(".team"), ownerId: "u9", title: nil)
            try await storage.setRole(.viewer, for: .role("R123"), datastoreKey: shared.key)
            let checkpoint = try #require(try await storage.datastore(key: key)).sequence

            let many = Set((0..<70_000).map { "role:R\($0)" }).union(["*", "u1", "u+q/="])
            let few: Set<String> = ["*", "u1", "u+q/=", "role:R39999", "role:R123"]
            for principals in [many, few] {
                let page = try await storage.find(Query("T").order(by: "objectId"), datastoreKey: key, readers: principals, limit: 10)
                #expect(page.objects.map(\.objectId) == ["mine", "plus"], "\(principals.count) principals")
                #expect(page.totalCount == 2)
                #expect(try await storage.count(Query("T"), datastoreKey: key, readers: principals) == 2)
                #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: principals) == 2)
                let lost = try await storage.lostAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: principals, currentPrincipals: ["u2"])
                #expect(Set(lost.map(\.objectId)) == ["mine", "plus"])
                let gained = try await storage.gainedAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: ["u2"], currentPrincipals: principals,
                    limit: 10)
                #expect(Set(gained.map(\.objectId)) == ["mine", "plus"])
                let datastores = try await storage.datastores(ownedBy: "u1", sharedWith: principals)
                #expect(datastores.map(\.key) == [shared.key])
            }
        }
    }
}

extension StorageConformance {
    /// Who may read an object, and who once could, through its life: created, its ACL changed, deleted
    /// (the tombstone keeps the readers of its last version) and made live again with another ACL.
    /// The object read by ID, the change feed, the change count by readers and access at a checkpoint
    /// all agree with that history, whichever way a backend keeps it.
    static func readerHistory(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            func expectReaders(_ current: Set<String>, former: Set<String>, deleted: Bool, _ step: String) async throws {
                let read = try #require(try await storage.object(datastoreKey: key, className: "T", objectId: "x"))
                #expect(read.isDeleted == deleted, "\(step)")
                #expect(read.readers == current, "\(step): read by ID")
                #expect(read.formerReaders == former, "\(step): read by ID")
                let feed = try await storage.changes(datastoreKey: key, after: 0, limit: 10, classes: nil)
                #expect(feed.map(\.objectId) == ["x"], "\(step)")
                #expect(feed.first?.readers == current, "\(step): the feed")
                #expect(feed.first?.formerReaders == former, "\(step): the feed")
                for principal in ["u1", "u2", "u3", "u4", "u9"] {
                    let count = try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: [principal])
                    #expect(count == (former.contains(principal) ? 1 : 0), "\(step): changes counted for \(principal)")
                }
            }

            let x1 = object("x", acl: readable(by: .user("u1"), .user("u2")))
            try await StorageWrites.put(x1, datastoreKey: key, into: storage)
            try await expectReaders(["u1", "u2"], former: ["u1", "u2"], deleted: false, "created")

            let x2 = updated(x1, [:], acl: readable(by: .user("u2"), .user("u3")))
            try await StorageWrites.put(x2, datastoreKey: key, into: storage)
            try await expectReaders(["u2", "u3"], former: ["u1", "u2", "u3"], deleted: false, "ACL changed")

            let x3 = StorageWrites.tombstone(of: x2)
            try await StorageWrites.put(x3, deleted: true, datastoreKey: key, into: storage)
            try await expectReaders(["u2", "u3"], former: ["u1", "u2", "u3"], deleted: true, "deleted")

            var x4 = updated(x3, ["n": 4], acl: readable(by: .user("u3"), .user("u4")))
            x4.fieldVersions = ["n": 4]
            try await StorageWrites.put(x4, datastoreKey: key, into: storage)
            try await expectReaders(["u3", "u4"], former: ["u1", "u2", "u3", "u4"], deleted: false, "made live again")

            // At a checkpoint after the last change, its readers are those of now.
            let checkpoint = try #require(try await storage.datastore(key: key)).sequence
            for (former, current, lost) in [
                (Set(["u2"]), Set<String>(), false), (["u3"], ["u9"], true), (["u4"], ["u3"], false), (["u1"], [], false),
            ] {
                let found = try await storage.lostAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: former, currentPrincipals: current)
                #expect(found.map(\.objectId) == (lost ? ["x"] : []), "lost from \(former) to \(current)")
            }
            for (former, current, gained) in [
                (Set(["u9"]), Set(["u4"]), true), (["u3"], ["u4"], false), (["u9"], ["u2"], false),
            ] {
                let found = try await storage.gainedAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: former, currentPrincipals: current,
                    limit: 10)
                #expect(found.map(\.objectId) == (gained ? ["x"] : []), "gained from \(former) to \(current)")
            }
        }
    }
}
