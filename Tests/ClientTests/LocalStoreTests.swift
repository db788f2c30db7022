import Foundation
import GRDB
@testable import Rooftop
import RooftopShared
import RooftopTestSupport
import Synchronization
import Testing

@Suite("Local store")
struct LocalStoreTests {
    private let key = ObjectKey(datastore: .app, className: "Note", objectId: "n1")

    private func snapshot(_ fields: [String: Value], version: Int64 = 1, id: String = "n1") -> ObjectSnapshot {
        ObjectSnapshot(className: "Note", objectId: id, datastore: .app, fields: fields, version: version)
    }

    @Test("objects, pins and garbage collection: an object stays while any label holds it")
    func pinsAndLabels() throws {
        let store = try LocalStore(.inMemory)
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: snapshot(["a": 1]), local: snapshot(["a": 1]), deleted: false)
            try transaction.pin(key, label: "One")
            try transaction.pin(key, label: "Two")
        }
        #expect(try store.labels(of: key, scope: "u1") == ["One", "Two"])
        try store.write(scope: "u1") { try $0.unpin(key, label: "One") }
        #expect(try store.object(key, scope: "u1") != nil)
        try store.write(scope: "u1") { try $0.unpinAll(label: "Two") }
        #expect(try store.object(key, scope: "u1") == nil)
    }

    @Test("an object's lookup has a connection of its own: it answers while long reads hold every reader, and sees each commit")
    func pointReadsBesideLongReads() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("point-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try LocalStore(.file(path: path), maximumReaders: 1)
        defer { store.close() }
        // A long read holds the pool's only reader until released.
        let holding = Atomic<Bool>(false)
        let released = Atomic<Bool>(false)
        defer { released.store(true, ordering: .relaxed) }
        Thread.detachNewThread {
            do {
                try store.read { _ in
                    holding.store(true, ordering: .relaxed)
                    let end = ContinuousClock.now.advanced(by: .seconds(120))
                    while !released.load(ordering: .relaxed), ContinuousClock.now < end { Thread.sleep(forTimeInterval: 0.001) }
                }
            } catch {
                Issue.record("the long read failed: \(error)")
            }
        }
        try await TestWait.until("the pool's reader is held") { holding.load(ordering: .relaxed) }
        let answered = Mutex<[Int64]>([])
        let key = key
        for value in [1, 2] as [Int64] {
            try store.write(scope: "u1") { transaction in
                try transaction.put(
                    key, server: snapshot(["a": .int(value)], version: value), local: snapshot(["a": .int(value)], version: value),
                    deleted: false)
            }
            Thread.detachNewThread {
                // Were it to wait for the pool's reader, it would answer only once released.
                do {
                    guard case .int(let read)? = try store.object(key, scope: "u1")?.local?.fields["a"] else {
                        Issue.record("the lookup found no object")
                        return
                    }
                    answered.withLock { $0.append(read) }
                } catch {
                    Issue.record("the lookup failed: \(error)")
                }
            }
            try await TestWait.until(within: .seconds(30), "the lookup answers \(value)") {
                answered.withLock { $0.last == value }
            }
        }
        #expect(holding.load(ordering: .relaxed) && !released.load(ordering: .relaxed), "the long read still holds the reader")
    }

    /// How many of this process's open files are `path` (Linux: `/proc/self/fd`).
    private static func openDescriptors(of path: String) throws -> Int {
        let directory = "/proc/self/fd"
        return try FileManager.default.contentsOfDirectory(atPath: directory).count { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)) == path
        }
    }

    @Test(
        "closing the store closes every connection to its file, the point reader's included",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
    func closingClosesEveryConnection() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("close-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try LocalStore(.file(path: path))
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: snapshot(["a": 1]), local: snapshot(["a": 1]), deleted: false)
        }
        #expect(try store.object(key, scope: "u1") != nil)
        #expect(try Self.openDescriptors(of: path) > 1, "the pool's writer and the point reader hold the file")
        store.close()
        #expect(try Self.openDescriptors(of: path) == 0, "a connection left open")
    }

    @Test("which of a page's objects are stored is read in one statement, whatever their IDs hold")
    func storedKeysOfAnyIDs() throws {
        let store = try LocalStore(.inMemory)
        // Quotes, backslashes, control characters, non-ASCII and JSON-like text, stored or not.
        let stored = [
            "plain", "quote\"d", "back\\slash", "tab\tnew\nline", "\r\u{08}\u{0C}", "\u{01}x", "\u{1F}", "\u{7F}", "a/b",
            "ünïcødé", "😀", "[\"array\"]", "{}", "",
        ]
        let missing = ["absent", "quote\"", "\\", "ünïcode"]
        try store.write(scope: "u1") { transaction in
            for id in stored {
                let key = ObjectKey(datastore: .app, className: "Note", objectId: id)
                try transaction.put(key, server: snapshot(["a": 1], id: id), local: snapshot(["a": 1], id: id), deleted: false)
            }
        }
        let asked = (stored + missing).map { ObjectKey(datastore: .app, className: "Note", objectId: $0) }
            + [ObjectKey(datastore: .app, className: "Other", objectId: "plain")]
        let found = try store.write(scope: "u1") { try $0.storedKeys(asked) }
        #expect(found == Set(stored.map { ObjectKey(datastore: .app, className: "Note", objectId: $0) }))
        #expect(try store.write(scope: "u2") { try $0.storedKeys(asked) }.isEmpty)
    }

    @Test("scopes keep users apart")
    func scopes() throws {
        let store = try LocalStore(.inMemory)
        try store.write(scope: "u1") { try $0.put(key, server: nil, local: snapshot(["a": 1]), deleted: false) }
        #expect(try store.object(key, scope: "u2") == nil)
        #expect(try store.objects(scope: "u1").count == 1)
    }

    @Test("the outbox keeps order, states and attempts; a refusal is set aside with the local state")
    func outbox() throws {
        let store = try LocalStore(.inMemory)
        let first = Mutation(datastore: .app, className: "Note", objectId: "n1", change: .update([FieldUpdate("a", .set(1))]))
        let second = Mutation(datastore: .app, className: "Note", objectId: "n1", change: .delete)
        try store.write(scope: "u1") { transaction in
            try transaction.enqueue(first)
            try transaction.enqueue(second)
            try transaction.markSent([first.mutationId])
            try transaction.markPending(
                second.mutationId, error: RooftopError(.noConnection, "offline"), nextAttemptAt: 10, countAttempt: true)
        }
        let rows = try store.outbox(scope: "u1")
        #expect(rows.map(\.mutation) == [first, second])
        #expect(rows.map(\.state) == [.sent, .pending])
        #expect(rows.last?.attempts == 1 && rows.last?.lastError?.code == .noConnection)
        try store.write(scope: "u1") { transaction in
            try transaction.reject(first, error: RooftopError(.disallowed, "no"), localState: snapshot(["a": 1]))
        }
        #expect(try store.outbox(scope: "u1").map(\.mutation) == [second])
        let rejected = try store.rejected(scope: "u1")
        #expect(rejected.map(\.mutation) == [first])
        #expect(rejected.first?.error.code == .disallowed && rejected.first?.localState?.fields["a"] == 1)
    }

    @Test("a file store keeps everything across reopening")
    func durability() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-store-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let mutation = Mutation(datastore: .app, className: "Note", objectId: "n1", change: .update([FieldUpdate("a", .set(2))]))
        do {
            let store = try LocalStore(.file(path: path))
            try store.write(scope: "u1") { transaction in
                try transaction.put(key, server: snapshot(["a": 1]), local: snapshot(["a": 2]), deleted: false)
                try transaction.pin(key, label: LocalStore.pendingLabel)
                try transaction.enqueue(mutation)
                try transaction.setCheckpoint(Checkpoint("c1"), datastore: .app)
            }
            try store.saveSession(
                StoredSession(user: UserInfo(objectId: "u1", username: "alice"), token: "t", expiresAt: Timestamp(millisecondsSinceEpoch: 1)))
            store.close()
        }
        let reopened = try LocalStore(.file(path: path))
        // Commits wait for the disk (a queued change survives a power loss); the log is
        // checkpointed every 8,192 pages by the checkpointer's thread, not SQLite's own hook
        // (which reads back 0 once replaced).
        let settings = try reopened.write(scope: "u1") { transaction in
            (
                try Int.fetchOne(transaction.db, sql: "PRAGMA synchronous"),
                try String.fetchOne(transaction.db, sql: "PRAGMA journal_mode"),
                try Int.fetchOne(transaction.db, sql: "PRAGMA wal_autocheckpoint")
            )
        }
        #expect(settings.0 == 2 && settings.1 == "wal" && settings.2 == 0, "\(settings)")
        #expect(reopened.checkpointer?.threshold == 8192)
        #expect(try reopened.object(key, scope: "u1")?.local?.fields["a"] == 2)
        #expect(try reopened.outbox(scope: "u1").map(\.mutation) == [mutation])
        #expect(try reopened.checkpoint(scope: "u1", datastore: .app) == Checkpoint("c1"))
        #expect(try reopened.session()?.user.username == "alice")
    }

    @Test("a deferred commit does not wait for the disk; the writer waits again after it, also when it throws")
    func deferredCommit() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-store-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let store = try LocalStore(.file(path: path))
            // SQLite's `synchronous` as the transaction runs: 2 is FULL (a commit syncs the log), 1 NORMAL.
            func level(_ durability: Durability, _ index: Int) throws -> Int? {
                try store.write(scope: "u1", durability: durability) { transaction in
                    try transaction.put(
                        ObjectKey(datastore: .app, className: "Note", objectId: "n\(index)"),
                        server: snapshot(["i": .int(Int64(index))], id: "n\(index)"),
                        local: snapshot(["i": .int(Int64(index))], id: "n\(index)"), deleted: false)
                    return try Int.fetchOne(transaction.db, sql: "PRAGMA synchronous")
                }
            }
            #expect(try level(.synced, 1) == 2)
            #expect(try level(.deferred, 2) == 1)
            #expect(try level(.synced, 3) == 2)
            struct Boom: Error {}
            #expect(throws: RooftopError.self) {
                try store.write(scope: "u1", durability: .deferred) { _ in throw Boom() }
            }
            #expect(try level(.synced, 4) == 2, "a deferred write that threw left the writer unsynced")
            #expect(try level(.deferred, 5) == 1)
            store.close()
        }
        // Committed all the same: every object is there after reopening.
        let reopened = try LocalStore(.file(path: path))
        for index in 1...5 {
            let key = ObjectKey(datastore: .app, className: "Note", objectId: "n\(index)")
            #expect(try reopened.object(key, scope: "u1")?.server?.fields["i"] == .int(Int64(index)))
        }
    }

    @Test("a failing transaction changes nothing and publishes nothing")
    func atomicity() async throws {
        let store = try LocalStore(.inMemory)
        let changes = store.changes.stream()
        struct Boom: Error {}
        #expect(throws: RooftopError.self) {
            try store.write(scope: "u1") { transaction in
                try transaction.put(key, server: nil, local: snapshot(["a": 1]), deleted: false)
                throw Boom()
            }
        }
        #expect(try store.object(key, scope: "u1") == nil)
        try store.write(scope: "u1") { try $0.put(key, server: nil, local: snapshot(["a": 1]), deleted: false) }
        var iterator = changes.makeAsyncIterator()
        let change = await iterator.next()
        #expect(change?.objects == [key], "the first change published is the committed one")
    }

    @Test("signing in adopts the rows kept without an account")
    func adoption() throws {
        let store = try LocalStore(.inMemory)
        let mutation = Mutation(datastore: .default, className: "Note", objectId: "n1", change: .update([FieldUpdate("a", .set(1))]))
        try store.write(scope: "") { transaction in
            try transaction.put(key, server: nil, local: snapshot(["a": 1]), deleted: false)
            try transaction.pin(key, label: "Mine")
            try transaction.enqueue(mutation)
        }
        try store.migrateScope(from: "", to: "u1")
        #expect(try store.object(key, scope: "") == nil)
        #expect(try store.objects(scope: "u1", pinnedWith: "Mine").map(\.key) == [key])
        #expect(try store.outbox(scope: "u1").map(\.mutation) == [mutation])
    }

    @Test("a cached query result pins its objects and replaces the previous result")
    func queryCache() throws {
        let store = try LocalStore(.inMemory)
        let other = ObjectKey(datastore: .app, className: "Note", objectId: "n2")
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: snapshot(["a": 1]), local: snapshot(["a": 1]), deleted: false)
            try transaction.put(other, server: snapshot(["a": 2], id: "n2"), local: snapshot(["a": 2], id: "n2"), deleted: false)
            try transaction.setQueryCache(hash: "h", datastore: .app, objects: [other, key], totalCount: 7)
        }
        #expect(try store.queryCache(scope: "u1", hash: "h")?.objects == [other, key])
        #expect(try store.queryCache(scope: "u1", hash: "h")?.totalCount == 7)
        try store.write(scope: "u1") { try $0.setQueryCache(hash: "h", datastore: .app, objects: [other], totalCount: 1) }
        #expect(try store.object(key, scope: "u1") == nil, "no longer cached, no other label: collected")
        #expect(try store.object(other, scope: "u1") != nil)
    }
}
