import RooftopShared
import Testing

@testable import RooftopServer

extension StorageConformance {
    /// The change feed lists each changed object once, at its last change, in sequence order,
    /// tombstones included (with the readers of their last version); it pages by sequence,
    /// filters by class, and counts what is left.
    static func changeFeed(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let a1 = object("a", fields: ["n": 1], acl: readable(by: .user("u1")))
            let b1 = object("b", acl: readable(by: .user("u2"), .role("R")))
            let c1 = object("c", className: "U")
            let a2 = updated(a1, ["n": 2], acl: readable(by: .user("u3")))
            var written: [Int64] = []
            for snapshot in [a1, b1, c1, a2] {
                written.append(try await StorageWrites.put(snapshot, datastoreKey: key, into: storage).sequence)
            }
            written.append(
                try await StorageWrites.put(
                    StorageWrites.tombstone(of: b1), deleted: true, datastoreKey: key, into: storage
                ).sequence)
            #expect(zip(written, written.dropFirst()).allSatisfy { $0 < $1 }, "each change numbered above the last")
            let (c, a, b) = (written[2], written[3], written[4])

            let all = try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil)
            #expect(all.map(\.objectId) == ["c", "a", "b"])
            #expect(all.map(\.sequence) == [c, a, b])
            #expect(all.map(\.isDeleted) == [false, false, true])
            #expect(all.first?.readers == ["*"])
            #expect(try all.dropFirst().first?.snapshot() == a2)
            #expect(all.dropFirst().first?.readers == ["u3"] && all.dropFirst().first?.formerReaders == ["u1", "u3"])
            #expect(all.last?.readers == ["u2", "role:R"], "a tombstone keeps the readers of its last version")
            #expect(all.last?.version == 2)
            #expect(try all.last?.snapshot().fields == [:])

            #expect(try await storage.changes(datastoreKey: key, after: c, limit: 100, classes: nil).map(\.sequence) == [a, b])
            #expect(try await storage.changes(datastoreKey: key, after: c, limit: 1, classes: nil).map(\.sequence) == [a])
            #expect(try await storage.changes(datastoreKey: key, after: b, limit: 100, classes: nil).isEmpty)
            #expect(try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: ["U"]).map(\.sequence) == [c])
            #expect(
                try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: ["T", "W"]).map(\.sequence)
                    == [a, b])
            #expect(try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: []).isEmpty)

            #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: nil) == 3)
            #expect(try await storage.changeCount(datastoreKey: key, after: a, classes: nil, readers: nil) == 1)
            #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: ["T"], readers: nil) == 2)
            #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: [], readers: nil) == 0)
            #expect(try await storage.changeCount(datastoreKey: key, after: b, classes: nil, readers: nil) == 0)
            // With readers: only objects one of them could ever read (current or former readers).
            #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: ["u1"]) == 1)
            #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: ["u2"]) == 1)
            #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: ["*", "u3"]) == 2)
            #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: ["nobody"]) == 0)
            #expect(try await storage.changeCount(datastoreKey: key, after: 0, classes: nil, readers: []) == 0)

            // Readers as the feed reads them: a live object's set (shared by the objects that name
            // it), `*` alone when everyone may read; the history adds readers whose access ended.
            let other = try await storage.openOrCreateDatastore(id: .default, ownerId: "u2", title: nil).key
            let d1 = object("d", acl: readable(by: .everyone, .user("u4")))
            let e1 = object("e", acl: ACL([.user("u1"): ACL.Access(read: false, write: true)]))
            let shared = (0..<5).map { object("s\($0)", acl: readable(by: .user("u6"), .role("R"))) }
            for snapshot in [d1, e1] + shared {
                try await StorageWrites.put(snapshot, datastoreKey: other, into: storage)
            }
            var feed = try await storage.changes(datastoreKey: other, after: 0, limit: 100, classes: nil)
            #expect(feed.first?.readers == ["*"] && feed.first?.formerReaders == ["*"])
            #expect(feed.dropFirst().first?.readers == [] && feed.dropFirst().first?.formerReaders == [])
            #expect(feed.dropFirst(2).allSatisfy { $0.readers == ["u6", "role:R"] && $0.formerReaders == $0.readers })
            try await StorageWrites.put(
                updated(d1, ["n": 2], acl: readable(by: .user("u5"))), datastoreKey: other, into: storage)
            feed = try await storage.changes(datastoreKey: other, after: 0, limit: 100, classes: nil)
            #expect(feed.last?.objectId == "d" && feed.last?.readers == ["u5"])
            #expect(feed.last?.formerReaders == ["*", "u4", "u5"], "the history adds the readers whose access ended")
        }
    }

    /// Paging through the feed while several tasks write never skips or repeats a change: every
    /// committed sequence number is unique; each page continues strictly after the previous one;
    /// every object's last change is in a page; and replaying the pages gives every object's
    /// final state.
    static func changeFeedUnderConcurrentWriters(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let writers = 4
            let writesPerWriter = 30
            let done = Recorder<Int>()

            let (committed, pages) = try await withThrowingTaskGroup(of: ([Int64], [[FeedObject]]).self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var sequences: [Int64] = []
                        for step in 0..<writesPerWriter {
                            // Own objects are created; shared ones are updated by everybody.
                            let objectId = step % 3 == 0 ? "shared\(step % 4)" : "w\(writer)-\(step)"
                            let outcome = try await write(storage, datastoreKey: key, objectId: objectId, base: nil) {
                                context in
                                let version = (context.current?.snapshot.version ?? 0) + 1
                                let next = object(
                                    objectId, version: version,
                                    fields: ["writer": .int(Int64(writer)), "step": .int(Int64(step))])
                                return StorageWrites.decision(next, deleted: false)
                            }
                            guard case .written(let stored, _, _) = outcome else {
                                throw StorageWrites.Unexpected(description: "write \(writer)/\(step) gave \(outcome)")
                            }
                            sequences.append(stored.sequence)
                        }
                        done.record(writer)
                        return (sequences, [])
                    }
                }
                group.addTask {
                    // The reader: pages of 5 until the writers are done and the feed is drained.
                    var pages: [[FeedObject]] = []
                    var after: Int64 = 0
                    while true {
                        let finished = done.count == writers
                        let page = try await storage.changes(datastoreKey: key, after: after, limit: 5, classes: nil)
                        if page.isEmpty {
                            if finished { break }
                            try await Task.sleep(for: .milliseconds(1))
                            continue
                        }
                        pages.append(page)
                        after = page.last?.sequence ?? after
                    }
                    return ([], pages)
                }
                var committed: [Int64] = []
                var pages: [[FeedObject]] = []
                for try await (sequences, read) in group {
                    committed += sequences
                    pages += read
                }
                return (committed, pages)
            }

            #expect(committed.count == writers * writesPerWriter && Set(committed).count == committed.count, "unique")
            let sequences = pages.flatMap { $0.map(\.sequence) }
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "pages continue strictly in order")
            #expect(pages.allSatisfy { !$0.isEmpty && $0.count <= 5 })

            var replayed: [String: ObjectSnapshot] = [:]
            for change in pages.joined() { replayed[change.objectId] = try change.snapshot() }
            let final = try await storage.changes(datastoreKey: key, after: 0, limit: 1_000, classes: nil)
            let finalStates = Dictionary(uniqueKeysWithValues: try final.map { ($0.objectId, try $0.snapshot()) })
            #expect(replayed == finalStates)
            #expect(final.count == writers * (writesPerWriter - writesPerWriter / 3) + 4)
            #expect(Set(final.map(\.sequence)).isSubset(of: Set(sequences)), "every last change was paged through")
            #expect(try await storage.datastore(key: key)?.sequence == committed.max())
        }
    }
}
