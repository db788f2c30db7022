import GRDB
import RooftopSQL
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// Counts read from a value index's keys alone, where the caller may read every object of the
/// class (``SQLQueryRunner/everyObjectReadable``): tombstones, other classes and other
/// datastores hold rows of the same field and must not count, and an object the caller may not
/// read turns the shortcut off.
@Suite("Counts from index keys")
struct SQLKeyCountTests {
    @Test("counts from keys agree with the evaluator, until an object is unreadable; then each match is tested")
    func countsFromKeys() async throws {
        try await withStorage(SQLiteFixture.factory) { storage, _ in
            let sqlite = try #require(storage as? SQLiteStorage)
            let main = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            let other = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
            var live: [ObjectSnapshot] = []
            func object(_ index: Int, className: String = "T", version: Int64 = 1, acl: ACL? = nil) throws -> ObjectSnapshot {
                ObjectSnapshot(
                    className: className, objectId: "o\(index)", datastore: main.id,
                    fields: [
                        "category": .string("c\(index % 3)"), "score": .int(Int64(index)),
                        "tags": .list([.string("t\(index % 4)"), .string("t\(index % 4)")]),
                        "loc": .geoPoint(try GeoPoint(latitude: 40 + Double(index % 10) / 100, longitude: -3)),
                    ],
                    acl: acl, version: version)
            }
            for index in 0..<90 {
                // Readable by everyone, and by u1 alone: both sets the caller holds.
                let snapshot = try object(index, acl: index % 5 == 0 ? .only("u1") : nil)
                try await StorageWrites.put(snapshot, datastoreKey: main.key, into: storage)
                if index % 7 == 0 {
                    try await StorageWrites.put(
                        StorageWrites.tombstone(of: snapshot), deleted: true, datastoreKey: main.key, into: storage)
                } else {
                    live.append(snapshot)
                }
                // The same rows in another class and another datastore.
                try await StorageWrites.put(try object(index, className: "U"), datastoreKey: main.key, into: storage)
                var elsewhere = try object(index)
                elsewhere.datastore = other.id
                try await StorageWrites.put(elsewhere, datastoreKey: other.key, into: storage)
            }
            let point = try GeoPoint(latitude: 40.03, longitude: -3)
            let predicates: [QueryPredicate] = [
                .comparison(field: "category", op: .equal, value: "c1"),
                .and([
                    .comparison(field: "score", op: .greaterOrEqual, value: 20),
                    .comparison(field: "score", op: .less, value: 61),
                ]),
                .in(field: "category", values: ["c0", "c2"]),
                .or([.comparison(field: "score", op: .less, value: 10), .comparison(field: "category", op: .equal, value: "c2")]),
                .listContains(field: "tags", value: "t1"),
                .near(field: "loc", point: point, maxDistanceMeters: 3000),
                .exists(field: "category"),
            ]
            let caller: Set<String> = ["*", "u1"]
            func readable(_ by: Set<String>) async throws -> Bool {
                try await sqlite.pool.read { db in
                    let sets = try #require(try SQLiteStorage.readerSets(of: by, db))
                    return try SQLiteStorage.everyObjectReadable(by: Set(sets), datastoreKey: main.key, className: "T", db)
                }
            }
            func check(_ objects: [ObjectSnapshot], readers: Set<String>) async throws {
                for predicate in predicates {
                    let query = Query(className: "T", predicate: predicate)
                    let expected = QueryEvaluator.run(
                        query, over: objects.filter { DifferentialDataset.canRead($0, readers: readers) },
                        lookup: { _ in nil }, canRead: { _ in true }
                    ).totalCount
                    #expect(try await storage.count(query, datastoreKey: main.key, readers: readers) == expected, "\(predicate)")
                    let page = try await storage.find(query, datastoreKey: main.key, readers: readers, limit: 5)
                    #expect(page.totalCount == expected, "\(predicate)")
                }
            }
            #expect(try await readable(caller))
            #expect(!(try await readable(["*"])))
            try await check(live, readers: caller)
            try await check(live, readers: ["*"])

            // One object only u2 may read: no longer every object.
            let hidden = try object(1000, acl: .only("u2"))
            try await StorageWrites.put(hidden, datastoreKey: main.key, into: storage)
            #expect(!(try await readable(caller)))
            try await check(live + [hidden], readers: caller)
            // One nobody but the server may read (no reader set).
            try await StorageWrites.put(
                StorageWrites.tombstone(of: hidden), deleted: true, datastoreKey: main.key, into: storage)
            #expect(try await readable(caller))
            let nobody = try object(1001, acl: ACL())
            try await StorageWrites.put(nobody, datastoreKey: main.key, into: storage)
            #expect(!(try await readable(caller)))
            try await check(live + [nobody], readers: caller)
        }
    }
}
