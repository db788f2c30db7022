import Foundation
import GRDB
import Synchronization
@_spi(Testing) @testable import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

@Suite("Sync: pull pages, checkpoints, purges", .timeLimit(.minutes(5)))
struct SyncPullTests {
    /// Makes the store's insert of `key`'s object fail (a trigger of the test's), or none when `nil`.
    private func failInsert(of key: ObjectKey?, _ client: RooftopClient) throws {
        try client.core.store.write(scope: client.core.scope) { transaction in
            try transaction.db.execute(sql: "DROP TRIGGER IF EXISTS poison")
            guard let key else { return }
            try transaction.db.execute(
                sql: "CREATE TRIGGER poison BEFORE INSERT ON objects WHEN new.object_id = '\(key.objectId)' BEGIN SELECT RAISE(ABORT, 'injected'); END")
        }
    }

    @Test("a pull pages through the feed, each page with its checkpoint; progress counts add up")
    func pagingAndProgress() async throws {
        try await withRealServer { server in
            server.setPageSize(2)
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let keys = try await server.seed(5, as: client)
            let stream = StreamRecorder(client.sync.progress)
            let reports = ReportBox()
            let count = try await client.sync.pull(datastore: .default) { reports.append($0) }
            #expect(count == 5)
            #expect(try client.storedKeys() == Set(keys))
            // Three pages (2, 2 and 1 changes), each asked for from the one before.
            let checkpoints = server.pageCheckpoints
            #expect(checkpoints.count == 3)
            #expect(server.pulls.map(\.since) == [nil] + checkpoints.prefix(2).map { Optional($0) })
            #expect(try client.core.store.checkpoint(scope: client.core.scope, datastore: .default) == checkpoints.last)
            let all = reports.all
            #expect(all.first == SyncProgress(phase: .pull, datastore: .default, processed: 0, total: 5), "the total comes first")
            #expect(all.map(\.processed) == [0, 2, 4, 5, 5])
            #expect(all.allSatisfy { $0.total == 5 })
            #expect(all.last?.isFinished == true && all.last?.error == nil)
            try await stream.first("the stream's last report") { $0.isFinished }
            #expect(stream.elements == all, "the stream and the callback see the same reports")
        }
    }

    @Test("pages share write transactions of at most PageBatch.maxChanges changes, written while the next pages come")
    func batchedWrites() async throws {
        try await withRealServer { server in
            let pages = 250
            server.setPageSize(pages)
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let count = SyncEngine.PageBatch.maxChanges + 2 * pages + 7
            let keys = try await server.seed(count, as: client)
            let reports = ReportBox()
            #expect(try await client.sync.pull(datastore: .default) { reports.append($0) } == count)
            #expect(try client.storedKeys() == Set(keys))
            #expect(try client.core.store.checkpoint(scope: client.core.scope, datastore: .default) == server.pageCheckpoints.last)
            let processed = reports.all.map(\.processed)
            #expect(processed == processed.sorted() && processed.last == count)
            #expect(try await client.query("Item", in: .default).fromLocalDatastore().count() == count)
        }
    }

    @Test("a batch whose write fails ends the pull: no batch after it is written, and the checkpoint stays before it")
    func failedBatch() async throws {
        try await withRealServer { server in
            server.setPageSize(500)
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let batch = SyncEngine.PageBatch.maxChanges
            let keys = try await server.seed(batch * 3 + 100, as: client)
            // The second batch's write fails at its 500th object (a trigger of the test's), while the
            // third may already wait for the writer behind it.
            try failInsert(of: keys[batch + 499], client)
            await #expect(throws: (any Error).self) { try await client.sync.pull(datastore: .default) }
            let stored = try client.storedKeys()
            #expect(Set(keys.prefix(batch)).subtracting(stored).isEmpty, "the first batch is written")
            #expect(stored.intersection(keys.suffix(from: 2 * batch)).count == 0, "nothing after the failed batch is")
            // The checkpoint of the first batch's last page (pages of 500 changes).
            #expect(
                try client.core.store.checkpoint(scope: client.core.scope, datastore: .default)
                    == server.pageCheckpoints[batch / 500 - 1])
            // Once the write can succeed, the pull goes on from that checkpoint.
            try failInsert(of: nil, client)
            #expect(try await client.sync.pull(datastore: .default) == keys.count - batch)
            #expect(try client.storedKeys() == Set(keys))
        }
    }

    @Test("a pull of many changes loads its datastore in bulk: passes build entries, queries see every object meanwhile, the pull that catches up ends it")
    func bulkLoad() async throws {
        try await withRealServer { server in
            server.setPageSize(250)
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let store = client.core.store
            // A pass after the first batch (2,000 objects, none built); none after the second (its
            // 2,000 are fewer than 1.5 times those built); the third fails.
            store.bulkLoading.withLock { settings in
                settings.enabled = true
                settings.thresholds.threshold = 1_000
                settings.thresholds.passSize = 1_000
                settings.thresholds.growth = 1.5
            }
            let fields = { (index: Int) -> [String: Value] in
                ["a": .int(Int64(index % 7)), "b": .int(Int64(index * 7_919 % 1_000)), "tags": .list([.string("t\(index % 3)")])]
            }
            let keys = try await server.seed(4_500, as: client, fields: fields)
            try await server.setIndexes([["a", "b"], ["tags"]], for: "Item")
            try failInsert(of: keys[4_200], client)
            await #expect(throws: (any Error).self) { try await client.sync.pull(datastore: .default) }
            let (built, unbuilt) = try store.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT count(DISTINCT object_key) FROM index_entries") ?? 0,
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM objects o JOIN bulk_loads b ON o.key >= b.built_to") ?? 0
                )
            }
            #expect(built == 2_000 && unbuilt == 2_000, "built \(built), waiting \(unbuilt)")

            // Local queries answer over every stored object, built or not.
            let stored = try client.storedKeys().compactMap { key in keys.firstIndex(of: key) }
            #expect(stored.count == 4_000)
            func expectAnswers(_ moment: String) async throws {
                let threes = stored.filter { $0 % 7 == 3 }
                    .sorted { (fields($0)["b"]?.intValue ?? 0, keys[$0].objectId) < (fields($1)["b"]?.intValue ?? 0, keys[$1].objectId) }
                let page = try await client.query("Item", in: .default).where(Field("a") == 3).order(by: "b").offset(5).limit(20)
                    .fromLocalDatastore().find()
                #expect(page.objects.map(\.objectId) == threes.dropFirst(5).prefix(20).map { keys[$0].objectId }, "\(moment)")
                #expect(page.totalCount == threes.count, "\(moment)")
                let tagged = try await client.query("Item", in: .default).where(Field("tags").contains("t1")).fromLocalDatastore().count()
                #expect(tagged == stored.filter { $0 % 3 == 1 }.count, "\(moment)")
            }
            try await expectAnswers("during the load")

            // The pull that catches up ends the load: every object's entries, as a write of each makes them.
            try failInsert(of: nil, client)
            #expect(try await client.sync.pull(datastore: .default) == 500)
            #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM bulk_loads") } == 0)
            #expect(try await !store.beginBulkLoad(scope: client.core.scope, datastore: .default), "not into a full datastore")
            let entries = {
                try store.read { db in
                    try Row.fetchAll(db, sql: "SELECT partition, hex(k1), hex(k2), object_key, readable FROM index_entries ORDER BY 1, 2, 3, 4")
                        .map(\.description)
                }
            }
            let loaded = try entries()
            #expect(Set(loaded.map { $0.split(separator: " ")[3] }).count == 4_500)
            try expectKeyCountsCurrent(store, "after the load", counted: true)
            try store.write(scope: client.core.scope) { transaction in
                for key in keys {
                    let local = try #require(try transaction.object(key)?.local)
                    try transaction.indexFields(key, local: local)
                }
            }
            #expect(try entries() == loaded)
        }
    }

    @Test("the rows a pull writes from objects prepared off the writer are those a write without preparation makes")
    func preparedRows() async throws {
        try await withRealServer { server in
            server.setPageSize(7)
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            var random = SeededGenerator(seed: 31)
            // Every kind the index tells apart: lists (with duplicates), points, text too long to
            // index, nulls, nested objects; some objects without fields.
            let keys = try await server.seed(40, as: client) { index in
                var fields: [String: Value] = [:]
                for name in ["a", "b", "c"] where random.next() % 4 != 0 { fields[name] = random.value() }
                if index % 3 == 0 { fields["tags"] = .list([.string("x"), .int(1), .string("x")]) }
                if index % 5 == 0, let point = try? GeoPoint(latitude: 1.5, longitude: Double(index)) { fields["at"] = .geoPoint(point) }
                if index % 7 == 0 { fields["note"] = .string(String(repeating: "n", count: 300)) }
                return fields
            }
            // Learned from the class's settings with the first page: only `a` and `b` in the value indexes.
            try await server.setIndexes([["a", "b"]], for: "Item")
            #expect(try await client.sync.pull(datastore: .default) == keys.count)
            let store = client.core.store
            let rows = {
                try store.read { db in
                    try [
                        "SELECT object_key, field, kind, hex(sort_key), latitude, longitude, complete, by_value FROM object_fields",
                        "SELECT object_key, field, hex(element_key), by_value FROM object_elements",
                        "SELECT o.key, m.principal, 0 FROM objects o JOIN reader_set_members m ON m.reader_set = o.readers",
                        "SELECT partition, hex(k1), hex(k2), object_key, readable FROM index_entries",
                    ].map { sql in try Row.fetchAll(db, sql: sql + " ORDER BY 1, 2, 3").map(\.description) }
                }
            }
            let pulled = try rows()
            // Rows of `a` and `b` alone: the other fields are read from the objects' documents. An
            // entry per object, and element entries of the lists in `a`.
            let elementEntries = pulled[3].filter { $0.contains("partition:-") }.count
            #expect(pulled[0].count > keys.count && pulled[3].count - elementEntries == keys.count, "\(pulled[0].prefix(3))")
            #expect(elementEntries > 0, "lists in `a`, which leads the index, have element entries")
            #expect(pulled[0].allSatisfy { $0.contains("field:\"a\"") || $0.contains("field:\"b\"") }, "\(pulled[0].prefix(3))")
            #expect(
                pulled[1].allSatisfy { $0.contains("field:\"a\"") || $0.contains("field:\"b\"") }, "no `tags` rows: \(pulled[1].prefix(3))")
            // Summed per key over each page, as an initial sync writes them.
            try expectKeyCountsCurrent(store, "pulled", counted: true)
            // `a` leads the index, whose entries find its values: its rows are out of the value index.
            #expect(pulled[0].allSatisfy { $0.contains("by_value:\($0.contains("field:\"a\"") ? 0 : 1)") })
            // Rewritten one by one, each from its stored local view, without preparation.
            try store.write(scope: client.core.scope) { transaction in
                for key in keys {
                    let local = try #require(try transaction.object(key)?.local)
                    try transaction.indexFields(key, local: local)
                }
            }
            #expect(try rows() == pulled)
        }
    }

    @Test("a batch of pages is one page: each object once, in its last state, in order, with the last checkpoint")
    func pageBatch() async throws {
        func upsert(_ id: String, version: Int64) -> PullChange {
            .upsert(ObjectSnapshot(className: "Item", objectId: id, datastore: .default, fields: [:], version: version))
        }
        var batch = SyncEngine.PageBatch()
        #expect(await batch.take() == nil)
        batch.add(
            PullResponse(changes: [upsert("a", version: 1), upsert("b", version: 1)], checkpoint: Checkpoint("c:2"), hasMore: true),
            checkpoint: Checkpoint("c:2"))
        batch.add(
            PullResponse(
                changes: [.tombstone(className: "Item", objectId: "b", version: 2), upsert("c", version: 1), upsert("a", version: 3)],
                checkpoint: Checkpoint("c:5"), hasMore: false, remaining: 0),
            checkpoint: Checkpoint("c:5"))
        #expect(!batch.isFull)
        let merged = await batch.take()
        #expect(merged?.checkpoint == Checkpoint("c:5"))
        #expect(merged?.page.changes == [.tombstone(className: "Item", objectId: "b", version: 2), upsert("c", version: 1), upsert("a", version: 3)])
        #expect(merged?.page.hasMore == false)
        #expect(merged?.prepared.count == 3 && merged?.prepared.allSatisfy { $0 == nil } == true, "nothing was prepared")
        #expect(await batch.take() == nil, "taking empties the batch")
        // Preparations follow their changes through the merge; a page without them has none.
        let first = PullResponse(changes: [upsert("a", version: 1), upsert("b", version: 1)], checkpoint: Checkpoint("c:2"), hasMore: true)
        batch.add(first, prepared: Task { SyncEngine.prepare(first) }, checkpoint: Checkpoint("c:2"))
        batch.add(
            PullResponse(changes: [upsert("c", version: 1)], checkpoint: Checkpoint("c:3"), hasMore: true),
            checkpoint: Checkpoint("c:3"))
        let third = PullResponse(changes: [upsert("a", version: 4), .tombstone(className: "Item", objectId: "d", version: 2)], checkpoint: Checkpoint("c:6"), hasMore: true)
        batch.add(third, prepared: Task { SyncEngine.prepare(third) }, checkpoint: Checkpoint("c:6"))
        let taken = await batch.take()
        let prepared = try #require(taken)
        #expect(prepared.page.changes.map(\.objectId) == ["b", "c", "a", "d"])
        #expect(prepared.prepared.map { $0?.snapshot.objectId } == ["b", nil, "a", nil])
        #expect(prepared.prepared[2]?.snapshot.version == 4, "the later state's preparation")
        batch.add(
            PullResponse(
                changes: (0..<SyncEngine.PageBatch.maxChanges).map { upsert("o\($0)", version: 1) }, checkpoint: Checkpoint("c:9"),
                hasMore: true),
            checkpoint: Checkpoint("c:9"))
        #expect(batch.isFull)
    }

    @Test("pulled pages are not written once another account is signed in")
    func accountChanged() async throws {
        let (client, _) = try offlineClient()
        try client.signInLocally("ann")
        let object = ObjectSnapshot(className: "Item", objectId: "i1", datastore: .default, fields: ["i": 1], version: 1)
        let page = PullResponse(changes: [.upsert(object)], checkpoint: Checkpoint("c:1"), hasMore: false)
        await #expect(throws: RooftopError.self) {
            try await client.sync.apply(
                page, datastore: .default, scope: .everything, checkpoint: Checkpoint("c:1"), owner: "someone-else",
                onChange: nil)
        }
        #expect(try client.core.store.object(ObjectKey(object), scope: "someone-else") == nil)
        #expect(try client.core.store.checkpoint(scope: "someone-else", datastore: .default) == nil)
        await client.shutdown()
    }

    @Test("a pulled page commits without waiting for the disk unless it records a new sync scope; the writer waits again after it")
    func pulledPageDeferred() async throws {
        let (client, owner) = try await signedUpSyncClient()
        let statements = try WriterStatements(client.core.store, scope: owner)
        let apply = { (object: ObjectSnapshot, checkpoint: Checkpoint) in
            let page = PullResponse(changes: [.upsert(object)], checkpoint: checkpoint, hasMore: false)
            try await client.sync.apply(
                page, datastore: .default, scope: .everything, checkpoint: checkpoint, owner: owner, onChange: nil)
            #expect(try client.core.store.object(ObjectKey(object), scope: owner)?.server == object)
        }
        // The first page records the scope, chosen on the device: its commit waits for the disk.
        try await apply(
            ObjectSnapshot(className: "Item", objectId: "i0", datastore: .default, fields: ["i": 0], version: 1),
            Checkpoint("c:0"))
        #expect(try client.core.store.syncFilter(scope: owner, datastore: .default) == .everything)
        #expect(statements.all.contains { $0.hasPrefix("INSERT INTO objects") }, "\(statements.all)")
        #expect(!statements.all.contains("PRAGMA synchronous = NORMAL"), "\(statements.all)")
        statements.clear()
        let object = ObjectSnapshot(className: "Item", objectId: "i1", datastore: .default, fields: ["i": 1], version: 1)
        try await apply(object, Checkpoint("c:1"))
        // The next, of the same scope: the object's row is written between `NORMAL` and `FULL`
        // (``Durability/deferred``).
        let all = statements.all
        let relaxed = try #require(all.firstIndex(of: "PRAGMA synchronous = NORMAL"))
        let written = try #require(all.firstIndex { $0.hasPrefix("INSERT INTO objects") })
        let synced = try #require(all.lastIndex(of: "PRAGMA synchronous = FULL"))
        #expect(relaxed < written && written < synced, "\(all)")
        await client.shutdown()
    }

    @Test("a pulled object's JSON is stored as received, not encoded again, and local queries read it")
    func storedAsReceived() async throws {
        let (client, owner) = try await signedUpSyncClient()
        try client.core.store.declareIndexes([["i"]], of: "Item")
        // As another writer may lay it out: members in another order, whitespace between tokens.
        let object = #"{ "version": 3, "fields": {"name": "b\u00e9", "i": 7, "tags": ["x", "y"]},"#
            + #" "objectId": "x", "className": "Item", "datastore": "\#(DatastoreID.default.rawValue)" }"#
        let body = #"{"checkpoint":"c:1","hasMore":false,"changes":[{"kind":"upsert","object":"# + object
            + #"},{"kind":"removal","className":"Item","objectId":"gone"}]}"#
        let (page, texts) = try PullResponse.decodeDocumentWithObjectTexts(Data(body.utf8))
        #expect(texts == [object, nil])
        try await client.sync.apply(
            page, prepared: SyncEngine.prepare(page, objectTexts: texts), datastore: .default, scope: .everything,
            checkpoint: Checkpoint("c:1"), owner: owner, onChange: nil)
        let stored = try client.core.store.read { db in try String.fetchOne(db, sql: "SELECT server FROM objects") }
        #expect(stored == object, "the text as received")
        let key = ObjectKey(datastore: .default, className: "Item", objectId: "x")
        #expect(
            try client.core.store.object(key, scope: owner)?.server
                == ObjectSnapshot(
                    className: "Item", objectId: "x", datastore: .default,
                    fields: ["name": "bé", "i": 7, "tags": ["x", "y"]], version: 3))
        // Through the rows of the declared field, and from the document for the others.
        let local = { (text: String, arguments: [Value]) in
            try await client.query("Item", in: .default).text(text, arguments).fromLocalDatastore().count()
        }
        #expect(try await local("where i = ?", [7]) == 1)
        #expect(try await local("where name = ?", ["bé"]) == 1)
        #expect(try await local("where tags contains ?", ["y"]) == 1)
        #expect(try await local("where name = ?", ["be"]) == 0)
        await client.shutdown()
    }

    @Test("a cancelled pull asks for no more pages: what it received is written with its checkpoint, and the next pull resumes there")
    func cancelledPullStops() async throws {
        try await withRealServer { server in
            server.setPageSize(10)
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            try await server.seed(200, as: client)
            server.pullGate.close()
            let pull = Task { try await client.sync.pull(datastore: .default) }
            try await TestWait.until("the first page asked for") { server.pullGate.waiting == 1 }
            pull.cancel()
            server.pullGate.open()
            await #expect(throws: RooftopError.self) { try await pull.value }
            // The first page, and at most the one asked for ahead of it: not the twenty.
            let asked = server.pulls.count
            #expect((1...2).contains(asked), "\(asked) pages asked for")
            let checkpoint = try #require(try client.core.store.checkpoint(scope: client.core.scope, datastore: .default))
            #expect(try client.storedKeys().count == 10, "the first page written")
            try await client.sync.pull(datastore: .default)
            #expect(server.pulls.dropFirst(asked).first?.since == checkpoint, "resumed after the first page")
            #expect(try client.storedKeys().count == 200)
        }
    }

    @Test("a class whose settings fetch was cancelled (a pull stopped) has its indexes declared by a later pull")
    func cancelledSettingsFetchTriedAgain() async throws {
        try await withRealServer { server in
            try await server.setIndexes([["i"]], for: "Item")
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            try await server.seed(3, as: client)
            server.failNext("/v1/classes", with: RooftopError(.cancelled, "the request was cancelled"))
            try await client.sync.pull(datastore: .default)
            func declared() throws -> [[String]] {
                try client.core.store.read { db in Array(try LocalStore.declaredIndexes(of: "Item", db).values) }
            }
            #expect(try declared().isEmpty, "pulled without the indexes")
            try await server.seed(1, className: "Item", as: client, fields: { _ in ["i": 99] })
            try await client.sync.pull(datastore: .default)
            #expect(try declared() == [["i"]], "asked again, not given up on")
        }
    }

    @Test("a pulled object is prepared with the rows of the fields the store keeps; a declaration made before its write has them worked out again")
    func preparedForKeptFields() async throws {
        let (client, owner) = try await signedUpSyncClient()
        let store = client.core.store
        try store.declareIndexes([["i"]], of: "Item")
        let objects = (0..<3).map { n in
            ObjectSnapshot(
                className: "Item", objectId: "o\(n)", datastore: .default,
                fields: ["i": .int(Int64(n)), "j": .int(Int64(10 + n)), "text": .string(String(repeating: "a", count: 420))],
                version: 1)
        }
        let page = PullResponse(changes: objects.map { .upsert($0) }, checkpoint: Checkpoint("c:3"), hasMore: false)
        let valueIndexed = try store.valueIndexedFields(of: ["Item", "Other"])
        let expected: [String: Set<String>?] = ["Item": ["i"], "Other": .none]
        #expect(valueIndexed == expected, "Other declares nothing: every field")
        let prepared = SyncEngine.prepare(page, valueIndexed: valueIndexed)
        let first = try #require(prepared.first ?? nil)
        #expect(first.rowFields == ["i"])
        #expect(first.rows(covering: ["i"])?.added.map(\.field).sorted() == ["i", "objectId"])
        #expect(first.rows(covering: ["i", "j"]) == nil, "a field not worked out")
        #expect(first.rows(covering: nil) == nil, "every field kept")
        #expect(SyncEngine.prepare(page).first??.rows(covering: ["i", "j"]) != nil, "unrestricted: covers any")
        // `j` is declared after the preparation, before the write.
        try store.declareIndexes([["i"], ["j"]], of: "Item")
        try await client.sync.apply(
            page, prepared: prepared, datastore: .default, scope: .everything, checkpoint: page.checkpoint,
            owner: owner, onChange: nil)
        let rows = try store.read { db in
            try String.fetchAll(db, sql: "SELECT field || by_value FROM object_fields ORDER BY field")
        }
        // Each leads an index: its rows are kept, out of the value index (the entries find its values).
        #expect(rows == ["i0", "i0", "i0", "j0", "j0", "j0"])
        #expect(try await client.query("Item", in: .default).text("where j = ?", [11]).fromLocalDatastore().count() == 1)
        #expect(try await client.query("Item", in: .default).text("where i >= ?", [1]).fromLocalDatastore().count() == 2)
        await client.shutdown()
    }

    @Test("a page that names an object twice, then removes another and brings it back, stores each once in its last state, counts included")
    func repeatedInPage() async throws {
        let (client, owner) = try await signedUpSyncClient()
        // Counted by `i`: a page's counts are summed and written as objects stored before in it
        // change again or go.
        try client.core.store.declareIndexes([["i", "objectId"]], of: "Item")
        func item(_ id: String, _ value: Int64, version: Int64) -> PullChange {
            .upsert(pulledItem(id, value, version: version))
        }
        let page = PullResponse(
            changes: [
                item("x", 1, version: 1), item("y", 5, version: 1), item("x", 2, version: 2),
                .tombstone(className: "Item", objectId: "y", version: 2), item("y", 6, version: 3),
            ],
            checkpoint: Checkpoint("c:5"), hasMore: false)
        #expect(SyncEngine.prepare(page).compactMap { $0 }.count == 4, "every upsert is prepared")
        // As a pull writes it: prepared off the writer, and without preparation.
        for prepared in [SyncEngine.prepare(page), []] {
            try await client.sync.apply(
                page, prepared: prepared, datastore: .default, scope: .everything, checkpoint: Checkpoint("c:5"),
                owner: owner, onChange: nil)
            let local = client.query("Item", in: .default).fromLocalDatastore()
            #expect(try await local.count() == 2)
            #expect(try await client.query("Item", in: .default).text("where i = ?", [2]).fromLocalDatastore().count() == 1)
            #expect(try await client.query("Item", in: .default).text("where i = ?", [6]).fromLocalDatastore().count() == 1)
            #expect(try await client.query("Item", in: .default).text("where i < ?", [2]).fromLocalDatastore().count() == 0)
            try expectKeyCountsCurrent(client.core.store, prepared.isEmpty ? "written again" : "first written", counted: true)
        }
        await client.shutdown()
    }

    @Test("a page's write lets a waiting write in after the slice under way, and stores its checkpoint with its last slice")
    func waitingWriteGoesBetweenSlices() async throws {
        let (client, owner) = try await signedUpSyncClient()
        let store = client.core.store
        try store.declareIndexes([["i", "objectId"]], of: "Item")
        let count = SyncEngine.sliceSize * 3 + 10
        let page = PullResponse(
            changes: (0..<count).map { .upsert(pulledItem("o\($0)", Int64($0), version: 1)) },
            checkpoint: Checkpoint("c:\(count)"), hasMore: false)
        // What a save arriving during the page's write sees when it runs: objects and checkpoint.
        let seen = Mutex<(objects: Int, checkpoint: Checkpoint?)?>(nil)
        let save = WaitingWrite(store) {
            let found = try? store.write(scope: owner) { transaction in
                (
                    try Int.fetchOne(transaction.db, sql: "SELECT count(*) FROM objects WHERE class_name = 'Item'") ?? -1,
                    try String.fetchOne(transaction.db, sql: "SELECT checkpoint FROM checkpoints").map(Checkpoint.init)
                )
            }
            seen.withLock { $0 = found }
        }
        try await client.sync.apply(
            page, datastore: .default, scope: .everything, checkpoint: page.checkpoint, owner: owner,
            onChange: save.observer)
        #expect(save.ran.wait(timeout: .now() + 10) == .success, "the waiting write ran")
        let during = try #require(seen.withLock { $0 })
        #expect(during.objects == SyncEngine.sliceSize, "it ran after the first slice, not after the page")
        #expect(during.checkpoint == nil, "the checkpoint waits for the page's last slice")
        #expect(try client.storedKeys().count == count)
        #expect(try store.checkpoint(scope: owner, datastore: .default) == page.checkpoint)
        try expectKeyCountsCurrent(store, "written in several transactions", counted: true)
        await client.shutdown()
    }

    @Test("a prepared object older than the state already stored is not written: the stored state and its rows stay")
    func preparedOlderThanStored() async throws {
        let (client, owner) = try await signedUpSyncClient()
        func page(_ value: Int64, version: Int64) -> PullResponse {
            PullResponse(
                changes: [.upsert(pulledItem("x", value, version: version))],
                checkpoint: Checkpoint("c:\(version)"), hasMore: false)
        }
        // Version 2 first (as an acknowledgement may store it), then a page still carrying version 1.
        for (value, version) in [(2, 2), (1, 1)] as [(Int64, Int64)] {
            let pulled = page(value, version: version)
            try await client.sync.apply(
                pulled, prepared: SyncEngine.prepare(pulled), datastore: .default, scope: .everything, checkpoint: nil,
                owner: owner, onChange: nil)
        }
        let key = ObjectKey(datastore: .default, className: "Item", objectId: "x")
        #expect(try client.core.store.object(key, scope: owner)?.server?.version == 2)
        #expect(try await client.query("Item", in: .default).text("where i = ?", [2]).fromLocalDatastore().count() == 1)
        #expect(try await client.query("Item", in: .default).text("where i = ?", [1]).fromLocalDatastore().count() == 0)
        await client.shutdown()
    }

    @Test("taking over the local scope's objects keeps the sync label of an object both scopes hold")
    func adoptKeepsSyncLabel() throws {
        let store = try LocalStore(.inMemory)
        defer { store.close() }
        let snapshot = ObjectSnapshot(className: "Item", objectId: "i1", datastore: .default, fields: ["i": 1], version: 1)
        let key = ObjectKey(snapshot)
        try store.write(scope: "") { transaction in
            try transaction.put(key, server: snapshot, local: snapshot, deleted: false, fresh: true, synced: true)
        }
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: snapshot, local: snapshot, deleted: false, fresh: true)
            try transaction.pin(key, label: "Fav")
        }
        try store.migrateScope(from: "", to: "u1")
        #expect(try store.labels(of: key, scope: "u1") == [LocalStore.syncLabel, "Fav"])
        try store.write(scope: "u1") { try $0.unpin(key, label: "Fav") }
        #expect(try store.object(key, scope: "u1") != nil, "still kept by the sync label")
    }

    @Test("an interrupted pull resumes from the last page applied")
    func resume() async throws {
        try await withRealServer { server in
            server.setPageSize(2)
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            try await server.seed(5, as: client)
            server.interruptPulls(afterPages: 1)
            await #expect(throws: RooftopError.self) { try await client.sync.pull(datastore: .default) }
            #expect(try client.storedKeys().count == 2, "the first page stays applied")
            let first = try #require(server.pageCheckpoints.first)
            #expect(try client.core.store.checkpoint(scope: client.core.scope, datastore: .default) == first)
            let asked = server.pulls.count
            let resumed = try await client.sync.pull(datastore: .default)
            #expect(resumed == 3)
            #expect(server.pulls.dropFirst(asked).first?.since == first, "the retry starts at the stored checkpoint")
            #expect(try client.storedKeys().count == 5)
            try await server.seed(1, className: "Late", as: client)
            #expect(try await client.sync.pull(datastore: .default) == 1, "only what changed since")
        }
    }

    @Test("pulled changes update live objects, with their unsaved changes kept on top")
    func liveObjects() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let key = try #require(try await server.seed(1, as: client).first)
            try await client.sync.pull(datastore: .default)
            let item = client.object("Item", id: key.objectId, in: .default)
            #expect(item.int("i") == 0 && item.version == 1)
            item["note"] = "mine"
            try await server.update(key, as: client, [FieldUpdate("i", .set(7))])
            try await client.sync.pull(datastore: .default)
            #expect(item.int("i") == 7 && item.version == 2)
            #expect(item.string("note") == "mine" && item.hasUnsavedChanges)
        }
    }

    @Test("tombstones and removals purge the local copies and their pins")
    func purges() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let keys = try await server.seed(3, as: client)
            try await client.sync.pull(datastore: .default)
            let deleted = client.object("Item", id: keys[0].objectId, in: .default)
            try await deleted.pin(label: "favourites")
            try await server.delete(keys[0], as: client)
            try await server.hide(keys[1], from: client)
            try await client.sync.pull(datastore: .default)
            #expect(try client.storedKeys() == [keys[2]])
            #expect(try deleted.pinLabels().isEmpty)
            #expect(deleted.isDeleted && deleted["i"] == nil)
            #expect(try client.core.store.objects(scope: client.core.scope, pinnedWith: "favourites").isEmpty)
        }
    }

    @Test("a datastore the server no longer has is purged locally; the pull says notFound and the status needsReset")
    func lostDatastore() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let shared = try await client.datastores.create(title: "Trip")
            try await server.seed(2, in: shared.id, as: client)
            try await shared.sync()
            #expect(try client.storedKeys(in: shared.id).count == 2)
            try await server.deleteDatastore(shared.id, as: client)
            do {
                try await client.sync.pull(datastore: shared.id)
                Issue.record("the pull must fail")
            } catch let error as RooftopError {
                #expect(error.code == .notFound)
            }
            #expect(try client.storedKeys(in: shared.id).isEmpty)
            #expect(try client.core.store.checkpoint(scope: client.core.scope, datastore: shared.id) == nil)
            let status = try shared.currentStatus()
            #expect(status.needsReset && status.lastError?.code == .notFound)
            try client.datastores.uncache(shared.id)
            #expect(try !shared.currentStatus().needsReset)
        }
    }

    @Test("objects of a synced datastore stay stored after their queued changes are acknowledged")
    func syncedObjectsStay() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            try await server.seed(1, as: client)
            try await client.sync.pull(datastore: .default)
            let mine = client.object("Item", id: "mine", in: .default)
            mine["i"] = 99
            try await mine.saveEventually()
            try await client.outbox.waitUntilIdle()
            let row = try #require(try client.core.store.object(mine.key, scope: client.core.scope))
            #expect(row.server?.version == 1 && row.local?.fields["i"] == 99)
            #expect(try mine.pinLabels() == [LocalStore.syncLabel])
        }
    }
}

/// An `Item` of the default datastore with `i` set to `value`, as a pull sends it.
private func pulledItem(_ id: String, _ value: Int64, version: Int64) -> ObjectSnapshot {
    ObjectSnapshot(className: "Item", objectId: id, datastore: .default, fields: ["i": .int(value)], version: version)
}

/// A client with no server (these tests apply pages themselves), signed in locally as `ann`,
/// and its scope.
private func signedUpSyncClient() async throws -> (RooftopClient, String) {
    let (client, _) = try offlineClient()
    try client.signInLocally("ann")
    return (client, client.core.scope)
}
