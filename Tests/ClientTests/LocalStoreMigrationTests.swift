import Foundation
import GRDB
import RooftopSQL
@testable import Rooftop
import RooftopShared
import Testing

/// An app updated in place keeps its local data: a store written by an earlier version opens,
/// migrates and answers as if written now.
@Suite("Local store migrations")
struct LocalStoreMigrationTests {
    @Test("a v4 store keeps its objects, pins, queue and session through v5, and its queries answer from the new index")
    func fromV4() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v4-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v4: local field index")
        let mine = ObjectSnapshot(
            className: "Thing", objectId: "t1", datastore: .app, fields: ["size": 3, "tags": ["a", "b"], "name": "alpha"],
            acl: ACL([.user("u1"): ACL.Access(read: true, write: true)]), version: 2)
        let theirs = ObjectSnapshot(
            className: "Thing", objectId: "t2", datastore: .app, fields: ["size": 9, "name": "beta"],
            acl: ACL([.user("u9"): ACL.Access(read: true, write: true)]), version: 1)
        let queued = Mutation(
            mutationId: MutationID.generate(), datastore: .app, className: "Thing", objectId: "t1", baseVersion: 2,
            change: .update([FieldUpdate("size", .set(4))]))
        var edited = mine
        edited.fields["size"] = 4
        try old.write { db in
            for (snapshot, local) in [(mine, edited), (theirs, theirs)] {
                try db.execute(
                    sql: """
                        INSERT INTO objects (scope, datastore, class_name, object_id, server, local, deleted)
                        VALUES ('u1', ?, 'Thing', ?, ?, ?, 0)
                        """,
                    arguments: [DatastoreID.app.rawValue, snapshot.objectId, try snapshot.encodedDocument(), try local.encodedDocument()])
            }
            try db.execute(
                sql: "INSERT INTO pins (scope, label, datastore, class_name, object_id) VALUES ('u1', 'Fav', ?, 'Thing', 't2')",
                arguments: [DatastoreID.app.rawValue])
            try db.execute(
                sql: """
                    INSERT INTO outbox (scope, mutation_id, datastore, class_name, object_id, mutation, state, created_at)
                    VALUES ('u1', ?, ?, 'Thing', 't1', ?, 'pending', 0)
                    """,
                arguments: [queued.mutationId.rawValue, DatastoreID.app.rawValue, try DocumentCoding.encode(queued)])
        }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        func ids(_ predicate: QueryPredicate?, readers: Set<String>? = nil, label: String? = nil) throws -> [String] {
            let query = Query(className: "Thing", predicate: predicate, order: [QueryOrder("size")])
            return try store.find(query, scope: "u1", datastore: .app, pinnedWith: label, readers: readers, excluding: [])
                .rows.map(\.key.objectId)
        }
        #expect(try ids(nil) == ["t1", "t2"])
        #expect(try ids(.comparison(field: "size", op: .equal, value: 4)) == ["t1"], "the local view is indexed")
        #expect(try ids(.listContains(field: "tags", value: "b")) == ["t1"])
        #expect(try ids(.startsWith(field: "name", prefix: "be")) == ["t2"])
        #expect(try ids(nil, readers: ["*", "u1"]) == ["t1"], "readers come from the ACLs")
        #expect(try ids(nil, label: "Fav") == ["t2"])
        #expect(try store.outbox(scope: "u1").map(\.mutation) == [queued])
        #expect(try store.labels(of: ObjectKey(datastore: .app, className: "Thing", objectId: "t2"), scope: "u1") == ["Fav"])
    }

    @Test("a v7 store keeps its index through v8 and v11: only the fields a class's indexes name keep rows")
    func fromV7() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v7-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v7: declared compound indexes")
        let objects = [
            ObjectSnapshot(
                className: "Thing", objectId: "t1", datastore: .app, fields: ["size": 1, "name": "ann", "tags": ["x"]],
                acl: nil, version: 1),
            ObjectSnapshot(
                className: "Thing", objectId: "t2", datastore: .app, fields: ["size": 2, "name": "bob", "tags": ["y"]],
                acl: nil, version: 1),
            ObjectSnapshot(className: "Other", objectId: "o1", datastore: .app, fields: ["name": "ann"], acl: nil, version: 1),
        ]
        try old.write { db in
            for object in objects {
                try StoreTransaction.index(
                    objectKey: insertSynced(object, scope: "u1", db), local: object, replacing: false, declared: false, db)
            }
            try db.execute(sql: "INSERT INTO class_indexes (class_name, field1) VALUES ('Thing', 'size')")
            try StoreTransaction.indexEntries(where: "1 = 1", [], counts: false, bulkLoads: false, db)
        }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        let flags = try store.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT o.class_name || '.' || f.field AS field, f.by_value FROM object_fields f
                    JOIN objects o ON o.key = f.object_key WHERE o.object_id IN ('t1', 'o1')
                    UNION ALL SELECT 'Thing.tags[]', by_value FROM object_elements ORDER BY 1
                    """
            ).map { "\($0["field"] as String)=\($0["by_value"] as Int)" }
        }
        // `Other` declares nothing: every field keeps its rows. `Thing`'s other fields are read
        // from the objects' documents; `size` leads its index, whose entries find its values, and
        // its rows are out of the value index (v14).
        #expect(flags == ["Other.name=1", "Other.objectId=1", "Thing.size=0"])
        func ids(_ predicate: QueryPredicate, _ className: String = "Thing") throws -> [String] {
            try store.find(
                Query(className: className, predicate: predicate), scope: "u1", datastore: .app, pinnedWith: nil,
                readers: nil, excluding: []
            ).rows.map(\.key.objectId).sorted()
        }
        #expect(try ids(.comparison(field: "size", op: .greaterOrEqual, value: 1)) == ["t1", "t2"])
        #expect(try ids(.comparison(field: "name", op: .equal, value: "bob")) == ["t2"], "a field not named, from the documents")
        #expect(try ids(.listContains(field: "tags", value: "x")) == ["t1"])
        #expect(try ids(.startsWith(field: "name", prefix: "a"), "Other") == ["o1"])
        // Declaring another index gives its field rows in the value index, for the objects stored.
        try store.declareIndexes([["size"], ["tags"]], of: "Thing")
        let tags = try store.read { db in
            try Int.fetchAll(db, sql: "SELECT by_value FROM object_elements UNION ALL SELECT by_value FROM object_fields WHERE field = 'tags'")
        }
        // Its rows and its elements' rows, the field leading `["tags"]`, out of the value index:
        // the index's entries and element entries find them.
        #expect(tags == [0, 0, 0, 0])
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM index_entries WHERE partition < 0") } == 2)
        #expect(try ids(.listContains(field: "tags", value: "y")) == ["t2"])
    }

    @Test("a v8 store's compound indexes get their counts per first key through v9, which counts follow and read")
    func fromV8() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v8-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v8: value indexes of the fields declared indexes name")
        let objects = (0..<9).map { index in
            ObjectSnapshot(
                className: "Thing", objectId: "t\(index)", datastore: .app,
                fields: ["size": .int(Int64(index % 3)), "name": .string("n\(index)")], acl: nil, version: 1)
        }
        try old.write { db in
            try db.execute(sql: "INSERT INTO class_indexes (class_name, field1, field2) VALUES ('Thing', 'size', 'name')")
            try db.execute(sql: "INSERT INTO class_indexes (class_name, field1) VALUES ('Thing', 'name')")
            for object in objects {
                try StoreTransaction.index(
                    objectKey: insertSynced(object, scope: "u1", db), local: object, replacing: false, declared: false, db)
            }
            // As v8 made them: value flags for the named fields only, entries without counts.
            try StoreTransaction.flagValueIndexed(of: "Thing", db)
            try StoreTransaction.indexEntries(where: "1 = 1", [], counts: false, bulkLoads: false, db)
        }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        func keyCounts() throws -> [String] {
            try store.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT d.field1, hex(k.k1) AS k1, k.live FROM index_key_counts k
                        JOIN index_partitions p ON p.id = k.partition JOIN class_indexes d ON d.id = p.class_index ORDER BY 2
                        """
                ).map { "\($0["field1"] as String) \($0["k1"] as String) \($0["live"] as Int)" }
            }
        }
        let keys = (0..<3).map { Value.int(Int64($0)).sortKey.map { String(format: "%02X", $0) }.joined() }
        #expect(try keyCounts() == keys.map { "size \($0) 3" }, "built from the entries, for (size, name) only")
        func count(_ size: Int64) throws -> Int {
            try store.count(
                Query(className: "Thing", predicate: .comparison(field: "size", op: .equal, value: .int(size))), scope: "u1",
                datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
        }
        #expect(try count(1) == 3)
        #expect(try count(7) == 0, "a key with no entry")
        // A deletion takes the object's entries away from its key's count; the last one, the row.
        try store.write(scope: "u1") { transaction in
            try transaction.db.execute(sql: "DELETE FROM index_entries WHERE object_key IN (SELECT key FROM objects WHERE object_id IN ('t1', 't4', 't7', 't2'))")
        }
        #expect(try keyCounts() == ["size \(keys[0]) 3", "size \(keys[2]) 2"])
        #expect(try count(1) == 0)
        #expect(try count(2) == 2)
    }

    @Test("a v19 store's pending pins go in v20: the label is read from the queue, and goes with the last queued change")
    func fromV19() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v19-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v19: server states kept as deltas from the view")
        let key = ObjectKey(datastore: .app, className: "Thing", objectId: "q1")
        let server = ObjectSnapshot(className: "Thing", objectId: "q1", datastore: .app, fields: ["size": 1], version: 2)
        let mutation = Mutation(
            datastore: .app, className: "Thing", objectId: "q1", baseVersion: 2,
            change: .update([FieldUpdate("size", .set(2))]))
        try old.write { db in
            let transaction = StoreTransaction(db: db, scope: "u1")
            try transaction.put(key, server: server, local: server, deleted: false)
            try transaction.enqueue(mutation)
            // The pin a v19 build wrote with the queued change.
            try db.execute(
                sql: "INSERT INTO pins (scope, label, datastore, class_name, object_id) VALUES ('u1', '_pending', ?, 'Thing', 'q1')",
                arguments: [DatastoreID.app.rawValue])
        }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        let pins = try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM pins") }
        #expect(pins == 0)
        #expect(try store.labels(of: key, scope: "u1") == [LocalStore.pendingLabel])
        #expect(try store.objects(scope: "u1", pinnedWith: LocalStore.pendingLabel).map(\.key) == [key])
        let pinned = try store.find(
            Query(className: "Thing"), scope: "u1", datastore: .app, pinnedWith: LocalStore.pendingLabel, readers: nil,
            excluding: [])
        #expect(pinned.rows.map(\.key) == [key])
        // Acknowledged: the queue empties, and the label goes with it (the object, kept by
        // nothing else, goes too).
        try store.write(scope: "u1") { transaction in
            try transaction.removeFromQueue(mutation.mutationId)
            try transaction.recomputeLocalView(key, server: server)
        }
        #expect(try store.labels(of: key, scope: "u1").isEmpty)
        #expect(try store.objects(scope: "u1", pinnedWith: LocalStore.pendingLabel).isEmpty)
        #expect(try store.object(key, scope: "u1") == nil)
    }

    @Test("a v5 store keeps its sync labels and local views through v6, which stores them in the object rows")
    func fromV5() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v5-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v5: the server's index layout")
        let synced = ObjectSnapshot(
            className: "Thing", objectId: "s1", datastore: .app, fields: ["size": 1], acl: nil, version: 3)
        let edited = ObjectSnapshot(
            className: "Thing", objectId: "e1", datastore: .app, fields: ["size": 2], acl: nil, version: 1)
        var view = edited
        view.fields["size"] = 5
        try old.write { db in
            for (id, server, local) in [("s1", synced, synced), ("e1", edited, view)] {
                try db.execute(
                    sql: """
                        INSERT INTO objects (scope, datastore, class_name, object_id, server, local, deleted)
                        VALUES ('u1', ?, 'Thing', ?, ?, ?, 0)
                        """,
                    arguments: [DatastoreID.app.rawValue, id, try server.encodedDocument(), try local.encodedDocument()])
            }
            for (label, id) in [("_sync", "s1"), ("Fav", "s1"), ("_pending", "e1")] {
                try db.execute(
                    sql: "INSERT INTO pins (scope, label, datastore, class_name, object_id) VALUES ('u1', ?, ?, 'Thing', ?)",
                    arguments: [label, DatastoreID.app.rawValue, id])
            }
        }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        let s1 = ObjectKey(datastore: .app, className: "Thing", objectId: "s1")
        let e1 = ObjectKey(datastore: .app, className: "Thing", objectId: "e1")
        #expect(try store.labels(of: s1, scope: "u1") == [LocalStore.syncLabel, "Fav"])
        // The pending label is read from the queue since v20 (its pins went), and e1 has none.
        #expect(try store.labels(of: e1, scope: "u1").isEmpty)
        #expect(try store.objects(scope: "u1", pinnedWith: LocalStore.syncLabel).map(\.key) == [s1])
        let query = Query(className: "Thing")
        let pinned = try store.find(query, scope: "u1", datastore: .app, pinnedWith: LocalStore.syncLabel, readers: nil, excluding: [])
        #expect(pinned.rows.map(\.key) == [s1])
        let rows = try store.write(scope: "u1") { transaction in [try transaction.object(s1), try transaction.object(e1)] }
        #expect(rows[0]?.server == synced && rows[0]?.local == synced)
        #expect(rows[1]?.server == edited && rows[1]?.local == view)
        let stored = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT object_id, local IS NULL AS shared, local_is_server, synced FROM objects ORDER BY object_id")
                .map { [$0["object_id"], "\($0["shared"] as Int)\($0["local_is_server"] as Int)\($0["synced"] as Int)"] as [String] }
        }
        #expect(stored == [["e1", "000"], ["s1", "111"]], "an unchanged view is stored once; the label is a column")
        // Losing the sync label (and every other) collects the object, as the pin row did.
        try store.write(scope: "u1") { transaction in
            try transaction.unpin(s1, label: "Fav")
            try transaction.unpin(s1, label: LocalStore.syncLabel)
        }
        #expect(try store.write(scope: "u1") { try $0.object(s1) } == nil)
    }

    @Test("a v11 store's reader rows become reader sets through v12, each stored once, which queries and flags read")
    func fromV11() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v11-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v11: rows only of value-indexed fields")
        func thing(_ id: String, _ readers: [String]) throws -> ObjectSnapshot {
            let acl = ACL(
                Dictionary(uniqueKeysWithValues: try readers.map { (try Principal($0), ACL.Access(read: true, write: false)) }))
            return ObjectSnapshot(className: "Thing", objectId: id, datastore: .app, fields: ["size": 1], acl: acl, version: 1)
        }
        let objects = [
            try thing("a", ["u1", "role:Staff"]), try thing("b", ["role:Staff", "u1"]), try thing("c", ["u2"]), try thing("d", []),
        ]
        try old.write { db in
            for object in objects {
                let key = try insertSynced(object, scope: "u1", db)
                // `d` has no rows, as a v11 store wrote it: no principal may read it.
                for principal in SQLIndexRows.readers(of: object.acl) {
                    try db.execute(sql: "INSERT INTO object_readers (object_key, principal) VALUES (?, ?)", arguments: [key, principal])
                }
            }
            // Rows without reader rows (indexed before they were kept) get their local view's:
            // `h`'s server state, `k`'s queued local view, which differs from its server state.
            _ = try insertSynced(try thing("h", ["u1"]), scope: "u1", db)
            try db.execute(
                sql: """
                    INSERT INTO objects (scope, datastore, class_name, object_id, server, local, deleted, synced, local_is_server)
                    VALUES ('u1', ?, 'Thing', 'k', ?, ?, 0, 1, 0)
                    """,
                arguments: [
                    DatastoreID.app.rawValue, try thing("k", ["u2"]).encodedDocument(),
                    try thing("k", ["u1", "u2"]).encodedDocument(),
                ])
        }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        let (sets, named, tables) = try store.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM reader_sets") ?? -1,
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT o.object_id, group_concat(m.principal, ' ') FROM objects o
                        LEFT JOIN (SELECT * FROM reader_set_members ORDER BY principal) m ON m.reader_set = o.readers
                        GROUP BY o.object_id ORDER BY o.object_id
                        """
                ).map { "\($0[0] as String): \(($0[1] as String?) ?? "")" },
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name = 'object_readers'")
            )
        }
        #expect(sets == 5, "a and b share one set; d has the empty set; h and k have sets of their own")
        #expect(named == ["a: role:Staff u1", "b: role:Staff u1", "c: u2", "d: ", "h: u1", "k: u1 u2"])
        #expect(tables.isEmpty, "the per-object rows are gone")
        func ids(_ readers: Set<String>, keepingFlags: Bool) throws -> [String] {
            let query = Query(className: "Thing", order: [QueryOrder("objectId")])
            // Sorted here: the objects this test wrote as a v11 store did have no index rows
            // (the migrations give them readers, not rows), so the order by ID cannot use them.
            return try store.find(
                query, scope: "u1", datastore: .app, pinnedWith: nil, readers: readers, excluding: [], keepingFlags: keepingFlags
            ).rows.map(\.key.objectId).sorted()
        }
        // Tested set by set, then by the flags made for these readers, then for others.
        #expect(try ids(["*", "u1"], keepingFlags: false) == ["a", "b", "h", "k"])
        #expect(try ids(["*", "u1"], keepingFlags: true) == ["a", "b", "h", "k"])
        #expect(try ids(["*", "u2", "role:Staff"], keepingFlags: true) == ["a", "b", "c", "k"])
        #expect(try ids(["*", "u2"], keepingFlags: true) == ["c", "k"])
        // A new object with a set already stored names it; a new set is stored once.
        try store.write(scope: "u1") { transaction in
            for object in [try thing("e", ["u1", "role:Staff"]), try thing("f", ["u3"]), try thing("g", ["u3"])] {
                try transaction.put(
                    ObjectKey(datastore: .app, className: "Thing", objectId: object.objectId), server: object, local: object,
                    deleted: false, fresh: true)
            }
        }
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM reader_sets") } == 6)
        #expect(try ids(["*", "u3"], keepingFlags: true) == ["f", "g"])
        #expect(try ids(["*", "u1"], keepingFlags: false) == ["a", "b", "e", "h", "k"])
        // A fresh insert of an object stored after all is stored as its update (no constraint
        // error): its row, its set and its flag follow.
        try store.write(scope: "u1") { transaction in
            let moved = try thing("f", ["u1"])
            try transaction.put(
                ObjectKey(datastore: .app, className: "Thing", objectId: "f"), server: moved, local: moved, deleted: false,
                fresh: true)
        }
        #expect(try ids(["*", "u3"], keepingFlags: true) == ["g"])
        #expect(try ids(["*", "u1"], keepingFlags: true) == ["a", "b", "e", "f", "h", "k"])
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM objects") } == 9)
        // v13: the counts of the objects inserted since are the writer's, the insert trigger gone.
        let (kept, recomputed, triggers) = try store.read { db in
            (
                try Row.fetchAll(
                    db, sql: "SELECT scope, datastore, class_name, live FROM class_counts WHERE live != 0 ORDER BY 1, 2, 3"
                ).map { "\($0)" },
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT scope, datastore, class_name, sum(deleted = 0) AS live FROM objects
                        GROUP BY 1, 2, 3 HAVING live != 0 ORDER BY 1, 2, 3
                        """
                ).map { "\($0)" },
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'class_counts_insert'")
            )
        }
        #expect(!kept.isEmpty && kept == recomputed)
        #expect(triggers == 0)
        // Sets no object names go with the datastore's objects.
        try store.write(scope: "u1") { try $0.removeDatastore(.app, discardQueued: true) }
        let left = try store.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM reader_sets) + (SELECT count(*) FROM reader_set_members)")
        }
        #expect(left == 0)
    }

    /// Stores `object` as a synced object with nothing queued, in the layout of v6 and later;
    /// returns its row key.
    private func insertSynced(_ object: ObjectSnapshot, scope: String, _ db: Database) throws -> Int64 {
        try db.execute(
            sql: """
                INSERT INTO objects (scope, datastore, class_name, object_id, server, local, deleted, synced, local_is_server)
                VALUES (?, ?, ?, ?, ?, NULL, 0, 1, 1)
                """,
            arguments: [scope, object.datastore.rawValue, object.className, object.objectId, try object.encodedDocument()])
        return db.lastInsertedRowID
    }

    @Test("a v15 store's indexes led by a list get element entries through v16, and its element rows leave the value index")
    func elementEntries() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v15-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v15: the queue's order without AUTOINCREMENT")
        let tags: [[Value]] = [["x", "y", "x"], ["y"], [], ["z", 1]]
        let objects = tags.enumerated().map { index, list in
            ObjectSnapshot(
                className: "Thing", objectId: "t\(index)", datastore: .app,
                fields: ["tags": .list(list), "size": .int(Int64(index))], acl: nil, version: 1)
        }
        try old.write { db in
            try db.execute(sql: "INSERT INTO class_indexes (class_name, field1, field2) VALUES ('Thing', 'tags', 'size')")
            try db.execute(sql: "INSERT INTO class_indexes (class_name, field1) VALUES ('Thing', 'size')")
            // The class's count row makes its partitions (v7's trigger), as the writer does.
            try db.execute(
                sql: "INSERT INTO class_counts (scope, datastore, class_name, live, readable) VALUES ('u1', ?, 'Thing', 4, 0)",
                arguments: [DatastoreID.app.rawValue])
            for object in objects {
                try StoreTransaction.index(
                    objectKey: insertSynced(object, scope: "u1", db), local: object, replacing: false, bulkLoads: false, db)
            }
            // What a v15 writer left: no element entries, the element rows in the value index.
            try db.execute(sql: "DELETE FROM index_entries WHERE partition < 0; UPDATE object_elements SET by_value = 1")
        }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        let (entries, flags) = try store.read { db in
            (
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT o.object_id, hex(c.k1) AS k1, hex(c.k2) AS k2 FROM index_entries c
                        JOIN objects o ON o.key = c.object_key WHERE c.partition < 0 ORDER BY 1, 2
                        """
                ).map { "\($0["object_id"] as String) \($0["k1"] as String) \($0["k2"] as String)" },
                try Int.fetchAll(db, sql: "SELECT DISTINCT by_value FROM object_elements")
            )
        }
        let hex = { (value: Value) in value.sortKey.map { String(format: "%02X", $0) }.joined() }
        let expected = objects.flatMap { object in
            Set((object.fields["tags"]?.listValue ?? []).map(hex)).sorted().map { "\(object.objectId) \($0) \(hex(object.fields["size"] ?? .null))" }
        }
        #expect(entries == expected.sorted(), "one entry per distinct element, with the index's next key")
        #expect(flags == [0], "the elements of a field that leads an index are out of the value index")
        func find(_ value: Value) throws -> (ids: [String], count: Int) {
            let query = Query(className: "Thing", predicate: .listContains(field: "tags", value: value))
            let page = try store.find(query, scope: "u1", datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
            let count = try store.count(query, scope: "u1", datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
            return (page.rows.map(\.key.objectId), count)
        }
        #expect(try find("x") == (["t0"], 1), "an element held twice counts once")
        #expect(try find("y") == (["t0", "t1"], 2))
        #expect(try find(1) == (["t3"], 1))
        #expect(try find("w") == ([], 0))
        // Dropping the index takes its element entries with it.
        try store.declareIndexes([["size"]], of: "Thing")
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM index_entries WHERE partition < 0") } == 0)
        #expect(try find("y") == (["t0", "t1"], 2), "then read from the documents")
    }

    @Test("a v14 queue keeps its rows, IDs and order through v15, and a row queued after comes last, without AUTOINCREMENT")
    func queueWithoutAutoincrement() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v14-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v14: rows of the fields that lead an index out of the value index")
        let mutations = (0..<4).map { index in
            Mutation(
                mutationId: MutationID.generate(), datastore: .app, className: "Thing", objectId: "t\(index % 2)",
                baseVersion: 1, change: .update([FieldUpdate("size", .set(.int(Int64(index))))]))
        }
        try old.write { db in
            for (index, mutation) in mutations.enumerated() {
                try db.execute(
                    sql: """
                        INSERT INTO outbox (scope, mutation_id, datastore, class_name, object_id, mutation, state, attempts,
                            last_error, next_attempt_at, created_at)
                        VALUES ('u1', ?, ?, 'Thing', ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        mutation.mutationId.rawValue, DatastoreID.app.rawValue, mutation.objectId,
                        try DocumentCoding.encode(mutation), index == 1 ? "sent" : "pending", index, index == 2 ? try DocumentCoding.encode(RooftopError(.noConnection, "offline")) : nil,
                        index == 3 ? 1_234 : nil, 100 + index,
                    ])
            }
            // Gaps in the IDs (rows settled meanwhile).
            try db.execute(sql: "DELETE FROM outbox WHERE seq = 2")
        }
        // The columns of v14's queue (v18 adds `folded`).
        let columns =
            "seq, scope, mutation_id, datastore, class_name, object_id, mutation, state, attempts, last_error, next_attempt_at, created_at"
        let before = try old.read { db in try Row.fetchAll(db, sql: "SELECT \(columns) FROM outbox ORDER BY seq") }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        let after = try store.read { db in try Row.fetchAll(db, sql: "SELECT \(columns) FROM outbox ORDER BY seq") }
        #expect(after == before, "every row, its ID and columns kept")
        let folded = try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE folded IS NOT NULL") }
        #expect(folded == 0, "v18: no row lists folds")
        #expect(try store.outbox(scope: "u1").allSatisfy(\.folded.isEmpty))
        // A status's look-up of the row an ID was folded into reads the rows that list folds only.
        let plan = try store.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    EXPLAIN QUERY PLAN SELECT * FROM outbox WHERE scope = 'u1' AND folded IS NOT NULL
                    AND EXISTS (SELECT 1 FROM json_each(outbox.folded) WHERE value = 'x')
                    """
            ).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("USING INDEX outbox_folding") }, "\(plan)")
        #expect(try store.outboxRow(folding: mutations[0].mutationId, scope: "u1") == nil)
        #expect(try store.outbox(scope: "u1").map(\.mutation) == [mutations[0], mutations[2], mutations[3]])
        let schema = try store.read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'outbox'") ?? ""
        }
        #expect(!schema.uppercased().contains("AUTOINCREMENT"), "\(schema)")
        let indexes = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'outbox' ORDER BY name")
        }
        #expect(indexes == ["outbox_by_object", "outbox_folding", "sqlite_autoindex_outbox_1"], "v15's, and v18's of the rows that list folds")
        // A row queued now comes after every row kept.
        let next = Mutation(
            mutationId: MutationID.generate(), datastore: .app, className: "Thing", objectId: "t0", baseVersion: 1,
            change: .update([FieldUpdate("size", .set(9))]))
        try store.write(scope: "u1") { transaction in _ = try transaction.enqueue(next) }
        #expect(try store.outbox(scope: "u1").map(\.mutation) == [mutations[0], mutations[2], mutations[3], next])
        #expect(try store.outbox(scope: "u1").map(\.seq) == [1, 3, 4, 5])
    }
}
