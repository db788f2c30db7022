import Foundation
import GRDB
import RooftopShared
import RooftopTestSupport
import Synchronization
import Testing

@testable import Rooftop

/// Group commit (``LocalStore/writeGrouped(scope:_:committed:)``): writes handed over while one
/// is under way share the next transaction; each is undone alone when it throws.
@Suite("Local store: group commit", .timeLimit(.minutes(5)))
struct GroupCommitTests {
    private static func key(_ index: Int) -> ObjectKey {
        ObjectKey(datastore: .app, className: "Note", objectId: "n\(index)")
    }

    private static func snapshot(_ index: Int) -> ObjectSnapshot {
        ObjectSnapshot(className: "Note", objectId: "n\(index)", datastore: .app, fields: ["i": .int(Int64(index))], version: 1)
    }

    @Test("writes handed over while one runs share one transaction; one that throws is undone alone")
    func sharedTransaction() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("group-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try LocalStore(.file(path: path))
        let published = Recorded<StoreChange>()
        let recorder = Task {
            for await change in store.changes.stream() { published.append(change) }
        }
        defer { recorder.cancel() }
        let committed = Recorded<Int>()
        let others = 7
        // The first write holds its transaction open until the others are all handed over. It
        // leads on a thread of its own (not one the tests' tasks run on, which it would block).
        let first = Recorded<LocalStore.GroupTurn>()
        let firstWrite = LocalStore.GroupedWrite(
            body: { transaction in
                let clock = ContinuousClock()
                let end = clock.now.advanced(by: .seconds(120))
                while store.group.withLock({ $0.waiting.count }) < others, clock.now < end {
                    Thread.sleep(forTimeInterval: 0.001)
                }
                try transaction.put(Self.key(0), server: Self.snapshot(0), local: Self.snapshot(0), deleted: false)
                return { committed.append(0) }
            },
            scope: "u1", turn: { first.append($0) })
        Thread {
            if store.handOver(firstWrite) { store.lead(until: firstWrite.id) }
        }.start()
        try await TestWait.until("the first write leads") { store.group.withLock { $0.leading } }
        let results = await withTaskGroup(of: (Int, Result<Int, RooftopError>).self) { group in
            for index in 1...others {
                group.addTask {
                    do throws(RooftopError) {
                        let value = try await store.writeGrouped(
                            scope: "u1",
                            { transaction in
                                try transaction.put(Self.key(index), server: Self.snapshot(index), local: Self.snapshot(index), deleted: false)
                                if index == 4 { throw RooftopError(.invalidOperation, "write 4 refuses") }
                                return index
                            }, committed: { index in committed.append(index) })
                        return (index, .success(value))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results: [Int: Result<Int, RooftopError>] = [:]
            for await (index, result) in group { results[index] = result }
            return results
        }
        try await TestWait.until("the first write is answered") { !first.values.isEmpty }
        #expect(first.values.count == 1)
        if case .done(.success)? = first.values.first {} else { Issue.record("the first write: \(first.values)") }
        for index in 1...others {
            switch results[index] {
            case .success(let value)?: #expect(index != 4 && value == index)
            case .failure(let error)?: #expect(index == 4 && error.code == .invalidOperation, "\(error)")
            case nil: Issue.record("write \(index) was not answered")
            }
            #expect(try store.object(Self.key(index), scope: "u1") != nil || index == 4)
        }
        #expect(try store.object(Self.key(4), scope: "u1") == nil, "the refused write is undone")
        #expect(committed.values.sorted() == [0, 1, 2, 3, 5, 6, 7])
        // Two commits: the first write alone, then the seven handed over meanwhile together.
        try await TestWait.until("both commits are published") { published.values.count >= 2 }
        let changes = published.values
        #expect(changes.count == 2)
        #expect(changes.last?.objects == Set([1, 2, 3, 5, 6, 7].map(Self.key)))
        store.close()
    }

    @Test("a write alone in its transaction (no savepoint) that throws is undone, and its caller hears why")
    func aloneThrows() async throws {
        let store = try LocalStore(.inMemory)
        let published = Recorded<StoreChange>()
        // Subscribed before any write.
        let stream = store.changes.stream()
        let recorder = Task {
            for await change in stream { published.append(change) }
        }
        defer { recorder.cancel() }
        let committed = Recorded<Int>()
        do throws(RooftopError) {
            _ = try await store.writeGrouped(
                scope: "u1",
                { transaction -> Int in
                    try transaction.put(Self.key(1), server: Self.snapshot(1), local: Self.snapshot(1), deleted: false)
                    throw RooftopError(.invalidOperation, "write 1 refuses")
                }, committed: { committed.append($0) })
            Issue.record("the refused write returned")
        } catch {
            #expect(error.code == .invalidOperation, "\(error)")
        }
        #expect(try store.object(Self.key(1), scope: "u1") == nil, "the refused write is undone")
        // The next write alone commits, and is the only change published.
        let value = try await store.writeGrouped(
            scope: "u1",
            { transaction in
                try transaction.put(Self.key(2), server: Self.snapshot(2), local: Self.snapshot(2), deleted: false)
                return 2
            }, committed: { committed.append($0) })
        #expect(value == 2)
        #expect(try store.object(Self.key(2), scope: "u1") != nil)
        #expect(committed.values == [2])
        try await TestWait.until("the commit is published") { !published.values.isEmpty }
        #expect(published.values.map(\.objects) == [Set([Self.key(2)])])
        store.close()
    }

    @Test("a write committed after another is published after it, however slow the first's publication")
    func publicationOrder() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("order-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try LocalStore(.file(path: path))
        let stream = store.changes.stream()
        let published = Recorded<StoreChange>()
        let recorder = Task {
            for await change in stream { published.append(change) }
        }
        defer { recorder.cancel() }
        let order = Recorded<String>()
        let stored: @Sendable (Int) -> Bool = { index in (try? store.object(Self.key(index), scope: "u1")) != nil }
        // The first write's publication lasts until the second write has committed (its row is
        // readable): the second's publication must wait for it.
        let first = Thread {
            do {
                try store.write(
                    scope: "u1",
                    { transaction in
                        try transaction.put(Self.key(1), server: Self.snapshot(1), local: Self.snapshot(1), deleted: false)
                    },
                    committed: {
                        let clock = ContinuousClock()
                        let end = clock.now.advanced(by: .seconds(120))
                        while !stored(2), clock.now < end { Thread.sleep(forTimeInterval: 0.001) }
                        order.append(stored(2) ? "first, after the second's commit" : "first, alone")
                        order.append(store.isPublishing ? "publishing" : "not publishing")
                    })
            } catch {
                order.append("first failed: \(error)")
            }
        }
        first.start()
        try await TestWait.until("the first write has committed") { stored(1) }
        try store.write(
            scope: "u1",
            { transaction in
                try transaction.put(Self.key(2), server: Self.snapshot(2), local: Self.snapshot(2), deleted: false)
            },
            committed: { order.append("second") })
        #expect(order.values == ["first, after the second's commit", "publishing", "second"])
        try await TestWait.until("both commits are published") { published.values.count >= 2 }
        #expect(published.values.map(\.objects) == [[Self.key(1)], [Self.key(2)]])
        #expect(!store.isPublishing)
        store.close()
    }

    @Test("waiting for publications ends once the commits made before it are published, not later ones")
    func waitForPublications() async throws {
        let order = PublicationOrder()
        // Nothing committed: no wait.
        await order.waitForPublications()
        let first = order.issue()
        let events = Recorded<String>()
        Task {
            await order.waitForPublications()
            events.append("waited")
        }
        try await TestWait.until("the task waits") { order.waiterCount == 1 }
        // A commit made after the wait began is not waited for.
        let second = order.issue()
        events.append("first published")
        order.finish(first)
        try await TestWait.until("the wait ends") { events.values.contains("waited") }
        #expect(events.values == ["first published", "waited"])
        #expect(order.isPublishing)
        order.finish(second)
        #expect(!order.isPublishing)
        #expect(order.waiterCount == 0)
    }

    @Test("concurrent saveEventually calls are each durable and queued once, in a store reopened after")
    func concurrentSaves() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("group-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (client, _) = try offlineClient(storage: .file(path: path))
        let ids = try await withThrowingTaskGroup(of: MutationID?.self) { group in
            for index in 0..<40 {
                group.addTask {
                    let note = client.object("Note", id: "n\(index)")
                    note["i"] = .int(Int64(index))
                    return try await note.saveEventually()
                }
            }
            var ids: [MutationID] = []
            for try await id in group { if let id { ids.append(id) } }
            return ids
        }
        #expect(Set(ids).count == 40)
        await client.shutdown()
        let reopened = try LocalStore(.file(path: path))
        let queued = try reopened.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0 }
        #expect(queued == 40)
        for index in 0..<40 {
            #expect(try reopened.object(Self.key(index), scope: "")?.local?.fields["i"] == .int(Int64(index)))
        }
        reopened.close()
    }
}

/// Values recorded from several tasks.
private final class Recorded<Value: Sendable>: Sendable {
    private let list = Mutex<[Value]>([])
    var values: [Value] { list.withLock { $0 } }
    func append(_ value: Value) { list.withLock { $0.append(value) } }
}
