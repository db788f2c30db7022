import RooftopSQL
import RooftopShared
import Testing

@testable import RooftopServer

/// Reader sets (`objects.readers`): queries find what each caller's principals may read, as ACLs
/// change and objects are deleted, whether the caller is a member of a few sets (named in the
/// query) or of more than ``SQLQueryCompiler/maxReaderSets`` (tested object by object).
extension StorageConformance {
    /// The objects ``ReaderSetCase/write(_:datastoreKey:)`` stores, as each caller may read them.
    enum ReaderSetCase {
        /// Callers (principal sets) and the object IDs each may read once every write is made.
        static let expected: [(readers: Set<String>, ids: Set<String>)] = [
            (["*"], ["public", "publicToo"]),
            (["*", "u1"], ["public", "publicToo", "mine", "ours", "wasRole"]),
            (["*", "u2"], ["public", "publicToo", "ours", "movedToU2"]),
            (["*", "u3", "role:R"], ["public", "publicToo", "viaRole", "odd"]),
            (["*", oddUser], ["public", "publicToo", "odd"]),
            // Callers not counted among everyone (none is, in the server): tested object by object.
            (["u1"], ["public", "mine", "ours", "wasRole"]),
            (["u4"], []),
            ([], []),
        ]

        /// A user ID that sorts before `role:R` by bytes and after it in a locale's collation: the
        /// migrations order a set's principals as the writer does (by bytes).
        static let oddUser = "Zed_9-x"


        /// Writes objects under many ACLs, then changes some ACLs and deletes one.
        static func write(_ storage: any Storage, datastoreKey key: Int64) async throws {
            let initial = [
                // Readable by everyone, each with its owner too: one set (`*`) for both.
                object("public", acl: readable(by: .everyone, .user("u1"))),
                object("publicToo", acl: readable(by: .everyone, .user("u2"))),
                object("mine", acl: readable(by: .user("u1"))),
                object("ours", acl: readable(by: .user("u1"), .user("u2"))),
                object("viaRole", acl: readable(by: .role("R"))),
                object("wasRole", acl: readable(by: .role("R"))),
                object("movedToU2", acl: readable(by: .user("u1"))),
                object("nobody", acl: ACL([.user("u1"): ACL.Access(read: false, write: true)])),
                object("deleted", acl: readable(by: .user("u1"), .role("R"))),
                object("odd", acl: readable(by: .role("R"), .user(oddUser))),
            ]
            for snapshot in initial { try await StorageWrites.put(snapshot, datastoreKey: key, into: storage) }
            try await StorageWrites.put(
                updated(initial[5], [:], acl: readable(by: .user("u1"))), datastoreKey: key, into: storage)
            try await StorageWrites.put(
                updated(initial[6], [:], acl: readable(by: .user("u2"))), datastoreKey: key, into: storage)
            try await StorageWrites.put(
                StorageWrites.tombstone(of: initial[8]), deleted: true, datastoreKey: key, into: storage)
        }

        /// The sets a migration makes of the objects ``write(_:datastoreKey:)`` leaves, by text,
        /// with their numbers of members.
        static let migratedSets: [String: Int64] = [
            #"["*"]"#: 1, #"["u1"]"#: 1, #"["u1","u2"]"#: 2, #"["role:R"]"#: 1, #"["u2"]"#: 1, #"["Zed_9-x","role:R"]"#: 2,
        ]

        /// After a migration: writes two objects whose ACLs' sets the migration made (one whose
        /// principals sort differently by bytes), so that a writer naming another text for them
        /// makes new sets; then checks a caller's count.
        static func writeAfterMigration(_ storage: any Storage, datastoreKey key: Int64) async throws {
            try await StorageWrites.put(
                object("oddToo", acl: readable(by: .user(oddUser), .role("R"))), datastoreKey: key, into: storage)
            try await StorageWrites.put(
                object("new", acl: readable(by: .user("u2"), .user("u1"))), datastoreKey: key, into: storage)
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: ["*", "u2"]) == 5)
        }

        /// Checks what each caller finds and counts (and that the admin, without readers, sees
        /// every live object).
        static func check(_ storage: any Storage, datastoreKey key: Int64) async throws {
            for (readers, ids) in expected {
                let page = try await storage.find(Query("T"), datastoreKey: key, readers: readers, limit: 100)
                #expect(Set(page.objects.map(\.objectId)) == ids, "readers \(readers.sorted())")
                #expect(page.totalCount == ids.count)
                #expect(try await storage.count(Query("T"), datastoreKey: key, readers: readers) == ids.count)
            }
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: nil) == 9)
        }
    }

    /// Who reads what, by reader sets, as ACLs change and objects are deleted.
    static func readerSets(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            try await ReaderSetCase.write(storage, datastoreKey: key)
            try await ReaderSetCase.check(storage, datastoreKey: key)
        }
    }

    /// A transaction that made a set and rolled back leaves no trace of it: a later write of the
    /// same ACL (the set made again) is found by its readers.
    static func readerSetsAfterRollback(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            struct Abort: Error {}
            for attempt in 0..<2 {
                await #expect(throws: Abort.self) {
                    try await storage.writeObjects { writer in
                        let snapshot = object("gone\(attempt)", acl: readable(by: .user("u7")))
                        let request = ObjectWriteRequest(
                            datastoreKey: key, className: "T", objectId: snapshot.objectId, baseVersion: nil, mutation: nil)
                        _ = try writer.write(request) { _ in StorageWrites.decision(snapshot, deleted: false) }
                        throw Abort()
                    }
                }
            }
            try await StorageWrites.put(object("kept", acl: readable(by: .user("u7"))), datastoreKey: key, into: storage)
            try await StorageWrites.put(object("also", acl: readable(by: .user("u7"))), datastoreKey: key, into: storage)
            let page = try await storage.find(Query("T"), datastoreKey: key, readers: ["*", "u7"], limit: 10)
            #expect(page.objects.map(\.objectId) == ["also", "kept"])
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: ["*", "u7"]) == 2)
        }
    }

    /// A caller who is a member of ten times ``SQLQueryCompiler/maxReaderSets`` sets (each object
    /// readable by it and by one other user) gets exact pages and counts, as does each other user
    /// (one set) and a caller who is both.
    static func manyReaderSets(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            let total = SQLQueryCompiler.maxReaderSets * 10 + 40
            for start in stride(from: 0, to: total, by: 500) {
                let end = min(start + 500, total)
                try await storage.writeObjects { writer in
                    for index in start..<end {
                        let snapshot = object(
                            "m\(index)", fields: ["n": .int(Int64(index))],
                            acl: readable(by: .user("many"), .user("other\(index)")))
                        let request = ObjectWriteRequest(
                            datastoreKey: key, className: "T", objectId: snapshot.objectId, baseVersion: nil, mutation: nil)
                        _ = try writer.write(request) { _ in StorageWrites.decision(snapshot, deleted: false) }
                    }
                }
            }
            let ordered = Query("T").order(by: "n", descending: true).limit(10)
            let page = try await storage.find(ordered, datastoreKey: key, readers: ["*", "many"], limit: 10)
            #expect(page.objects.map(\.objectId) == (0..<10).map { "m\(total - 1 - $0)" })
            #expect(page.totalCount == total)
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: ["*", "many"]) == total)
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: ["many"]) == total)
            let ranged = Query("T").where(Field("n") < 100)
            #expect(try await storage.count(ranged, datastoreKey: key, readers: ["*", "many"]) == 100)
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: ["*", "other7"]) == 1)
            let one = try await storage.find(Query("T"), datastoreKey: key, readers: ["*", "other7"], limit: 10)
            #expect(one.objects.map(\.objectId) == ["m7"])
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: ["*", "many", "other7"]) == total)
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: ["*"]) == 0)
        }
    }
}

extension StorageConformance {
    /// The history sweep deletes the reader sets no object names (at once on SQLite, whose one
    /// writer sees every set named; on PostgreSQL once a sweep found one unnamed more than
    /// ``PostgresStorage/readerSetGrace`` before), never a set an object names again meanwhile, and
    /// queries answer the same before and after.
    static func readerSetsSwept(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            try await ReaderSetCase.write(storage, datastoreKey: key)
            // A second set no object names, in another datastore: `u8`'s, then named again
            // between the two sweeps.
            let other = try await storage.openOrCreateDatastore(id: try DatastoreID("other"), ownerId: "u8", title: nil).key
            let u8 = try await StorageWrites.put(object("u8", acl: readable(by: .user("u8"))), datastoreKey: other, into: storage)
            try await StorageWrites.put(
                updated(u8.snapshot, [:], acl: readable(by: .user("u1"))), datastoreKey: other, into: storage)

            let start: Int64 = 1_800_000_000_000
            func sweep(at time: Int64) async throws -> Int {
                try await storage.sweepHistory(
                    cutoff: Timestamp(millisecondsSinceEpoch: 0), now: Timestamp(millisecondsSinceEpoch: time)
                ).readerSets
            }
            var deleted = try await sweep(at: start)
            try await ReaderSetCase.check(storage, datastoreKey: key)
            try await StorageWrites.put(object("u8again", acl: readable(by: .user("u8"))), datastoreKey: other, into: storage)
            deleted += try await sweep(at: start + PostgresStorage.readerSetGrace + 1)
            deleted += try await sweep(at: start + 2 * PostgresStorage.readerSetGrace + 2)
            // The deleted object's set (`u1`, `role:R`) goes; `u8`'s is swept (SQLite, before it is
            // named again, then made again) or kept (PostgreSQL).
            #expect(deleted == 1 || deleted == 2, "\(deleted) sets deleted")
            try await ReaderSetCase.check(storage, datastoreKey: key)
            let u8Page = try await storage.find(Query("T"), datastoreKey: other, readers: ["*", "u8"], limit: 10)
            #expect(u8Page.objects.map(\.objectId) == ["u8again"])

            // The swept ACL written again: its set is made again, and found by its readers.
            try await StorageWrites.put(
                object("again", acl: readable(by: .user("u1"), .role("R"))), datastoreKey: key, into: storage)
            let page = try await storage.find(Query("T"), datastoreKey: key, readers: ["*", "role:R"], limit: 100)
            #expect(Set(page.objects.map(\.objectId)) == ["public", "publicToo", "viaRole", "odd", "again"])
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: ["*", "role:R"]) == 5)
        }
    }
}
