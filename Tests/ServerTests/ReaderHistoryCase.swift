import RooftopShared
import Testing

@testable import RooftopServer

/// One datastore's objects whose readers' history holds every kind of row
/// (``ReaderHistoryWrite``), and every read of readers over them, for the migrations that drop
/// the history's rows a reader set tells (SQLite v15, PostgreSQL v10): the answers after the
/// migration are those before it.
enum ReaderHistoryCase {
    private typealias C = StorageConformance

    /// The principal sets every read is asked for.
    static let principals: [Set<String>] = [["u1"], ["u2"], ["u3"], ["u4"], ["role:R"], ["*", "u1"], ["*"], []]

    /// Writes objects created, changed, deleted and made live again, with readers of their own;
    /// `afterCreations` runs once the five first objects are created. Returns the datastore's
    /// sequence after the last write, the checkpoint ``answers(_:datastoreKey:checkpoint:)`` asks
    /// access at.
    static func write(
        _ storage: any Storage, datastoreKey key: Int64, afterCreations: () async throws -> Void
    ) async throws -> Int64 {
        let created = C.object("created", acl: C.readable(by: .user("u1"), .role("R")))
        let everyone = C.object("everyone")
        let publicOwned = C.object("publicOwned", acl: C.readable(by: .everyone, .user("u1")))
        let changed = C.object("changed", acl: C.readable(by: .user("u1"), .user("u2")))
        let deleted = C.object("deleted", acl: C.readable(by: .user("u2"), .user("u3")))
        for snapshot in [created, everyone, changed, deleted, publicOwned] {
            try await StorageWrites.put(snapshot, datastoreKey: key, into: storage)
        }
        try await afterCreations()
        try await StorageWrites.put(
            C.updated(changed, [:], acl: C.readable(by: .user("u2"), .user("u3"))), datastoreKey: key, into: storage)
        let tombstone = StorageWrites.tombstone(of: deleted)
        try await StorageWrites.put(tombstone, deleted: true, datastoreKey: key, into: storage)
        let revived = C.object("revived", acl: C.readable(by: .user("u1")))
        try await StorageWrites.put(revived, datastoreKey: key, into: storage)
        let revivedTombstone = StorageWrites.tombstone(of: revived)
        try await StorageWrites.put(revivedTombstone, deleted: true, datastoreKey: key, into: storage)
        try await StorageWrites.put(
            C.updated(revivedTombstone, [:], acl: C.readable(by: .user("u4"))), datastoreKey: key, into: storage)
        return try #require(try await storage.datastore(key: key)).sequence
    }

    /// Every read of readers: by ID, the feed, change counts, lost and gained access at
    /// `checkpoint` between every two of ``principals``, and a query for each, one line each.
    static func answers(_ storage: any Storage, datastoreKey key: Int64, checkpoint: Int64) async throws -> [String] {
        var found: [String] = []
        for id in ["created", "everyone", "changed", "deleted", "revived", "publicOwned"] {
            let read = try #require(try await storage.object(datastoreKey: key, className: "T", objectId: id))
            found.append("\(id): \(read.readers.sorted()) \(read.formerReaders.sorted())")
        }
        for object in try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil) {
            found.append("feed \(object.objectId): \(object.readers.sorted()) \(object.formerReaders.sorted())")
        }
        for readers in principals {
            let count = try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: readers)
            found.append("count \(readers.sorted()): \(count)")
            for current in principals {
                let lost = try await storage.lostAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: readers, currentPrincipals: current)
                let gained = try await storage.gainedAccess(
                    datastoreKey: key, atSequence: checkpoint, formerPrincipals: readers, currentPrincipals: current,
                    limit: 100)
                found.append(
                    "\(readers.sorted()) to \(current.sorted()): lost \(lost.map(\.objectId)) gained \(gained.map(\.objectId))")
            }
            let page = try await storage.find(Query("T").order(by: "objectId"), datastoreKey: key, readers: readers, limit: 10)
            found.append("query \(readers.sorted()): \(page.objects.map(\.objectId))")
        }
        return found
    }

    /// The answers every backend gives, whatever its history's rows: a few lines checked as
    /// written out.
    static func checkExpected(_ expected: [String]) {
        #expect(expected.contains("feed deleted: [\"u2\", \"u3\"] [\"u2\", \"u3\"]"), "\(expected)")
        #expect(expected.contains("revived: [\"u4\"] [\"u1\", \"u4\"]"), "\(expected)")
        #expect(expected.contains("publicOwned: [\"*\", \"u1\"] [\"*\", \"u1\"]"), "\(expected)")
        #expect(expected.contains("[\"u1\"] to []: lost [\"created\", \"publicOwned\"] gained []"), "\(expected)")
        #expect(expected.contains("count [\"u4\"]: 1"), "\(expected)")
    }
}
