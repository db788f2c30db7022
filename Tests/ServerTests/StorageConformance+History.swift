import RooftopShared
import Testing

@testable import RooftopServer

extension StorageConformance {
    /// The operation log: `decide` gets the changes committed after an old base version, and
    /// `operations(after:)` returns them, oldest first, as they were recorded — except an object's
    /// first creation, which keeps its version, prior values and origin but not its updates or ACL
    /// (stored in a shorter form, ``StoredOperation``).
    static func concurrentChanges(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let v1 = object("a", fields: ["n": 1, "tags": ["x"]])
            let v2 = updated(v1, ["n": 2, "gone": nil])
            let v3 = updated(v2, ["tags": nil, "name": "Seán\u{0}"])
            let records = [
                OperationRecord(
                    version: 1, change: .update([FieldUpdate("n", .set(1)), FieldUpdate("tags", .set(["x"]))]),
                    priorValues: ["n": nil, "tags": nil], origin: "3edaff4c10d2dafa.5e517ff6"),
                OperationRecord(
                    version: 2, change: .update([FieldUpdate("n", .increment(1))], acl: readable(by: .everyone)),
                    priorValues: ["n": .some(1)]),
                OperationRecord(
                    version: 3, change: .update([FieldUpdate("tags", .unset), FieldUpdate("name", .set("Seán\u{0}"))]),
                    priorValues: ["tags": .some(["x"]), "name": nil]),
            ]
            for (snapshot, record) in zip([v1, v2, v3], records) {
                let outcome = try await write(storage, datastoreKey: key, objectId: "a", base: snapshot.version - 1) {
                    _ in
                    .write(snapshot: snapshot, deleted: false, operation: record, merges: [])
                }
                guard case .written = outcome else {
                    Issue.record("writing v\(snapshot.version) gave \(outcome)")
                    return
                }
            }
            var logged = records
            logged[0].change = .update([])
            #expect(try await storage.operations(datastoreKey: key, className: "T", objectId: "a", after: 0) == logged)
            #expect(
                try await storage.operations(datastoreKey: key, className: "T", objectId: "a", after: 1)
                    == Array(records[1...]))
            #expect(try await storage.operations(datastoreKey: key, className: "T", objectId: "a", after: 3) == [])
            #expect(try await storage.operations(datastoreKey: key, className: "T", objectId: "zz", after: 0) == [])
            #expect(try await storage.operations(datastoreKey: key, className: "U", objectId: "a", after: 0) == [])

            let seen = Recorder<ObjectWriteContext>()
            for base: Int64? in [1, 0, 3, nil, 7] {
                _ = try await write(storage, datastoreKey: key, objectId: "a", base: base, recorder: seen) { context in
                    .unchanged(version: 3, object: context.current?.snapshot, merges: [])
                }
            }
            let concurrent = seen.all.map(\.concurrentChanges)
            #expect(concurrent.count == 5)
            #expect(concurrent.first == Array(records[1...]), "base 1: versions 2 and 3")
            #expect(concurrent.dropFirst().first == logged, "base 0: everything")
            let laterBases = concurrent.dropFirst(2).map(\.count)
            #expect(laterBases == [0, 0, 0], "a current, absent or future base has none")
            #expect(seen.all.allSatisfy { $0.current?.snapshot == v3 })
        }
    }

    /// Datastore counters: the sequence is the last committed change's, growing with each; the
    /// record count and size (the Dropbox Datastore API's accounting) follow creates, updates,
    /// deletes and re-creates, and nothing else.
    static func datastoreCounters(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            let other = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
            let key = datastore.key
            let base = SizeAccounting.datastoreBaseBytes
            func expectCounters(
                sequence: Int64, records: Int, size: Int, sourceLocation: SourceLocation = #_sourceLocation
            ) async throws {
                let record = try #require(try await storage.datastore(key: key), sourceLocation: sourceLocation)
                #expect(record.sequence == sequence, "sequence", sourceLocation: sourceLocation)
                #expect(record.recordCount == records, "record count", sourceLocation: sourceLocation)
                #expect(record.sizeBytes == size, "size", sourceLocation: sourceLocation)
            }
            try await expectCounters(sequence: 0, records: 0, size: base)

            let a1 = object("a", fields: ["name": "hello", "tags": ["x", "yz"]])
            let b1 = object("b", className: "U", fields: ["data": .bytes(BinaryValue(.init([1, 2, 3])))])
            let first = try await StorageWrites.put(a1, datastoreKey: key, into: storage).sequence
            let second = try await StorageWrites.put(b1, datastoreKey: key, into: storage).sequence
            #expect(0 < first && first < second)
            let size: (ObjectSnapshot) -> Int = SizeAccounting.recordSize
            try await expectCounters(sequence: second, records: 2, size: base + size(a1) + size(b1))

            let a2 = updated(a1, ["name": "a much longer name than before", "tags": nil])
            let third = try await StorageWrites.put(a2, datastoreKey: key, into: storage).sequence
            #expect(third > second)
            try await expectCounters(sequence: third, records: 2, size: base + size(a2) + size(b1))

            let b2 = StorageWrites.tombstone(of: b1)
            let fourth = try await StorageWrites.put(b2, deleted: true, datastoreKey: key, into: storage).sequence
            #expect(fourth > third)
            try await expectCounters(sequence: fourth, records: 1, size: base + size(a2))

            // Deleting a tombstone again is answered unchanged and counts nothing.
            _ = try await write(storage, datastoreKey: key, objectId: "b", className: "U", base: nil) { _ in
                .unchanged(version: 2, object: nil, merges: [])
            }
            _ = try await write(storage, datastoreKey: key, objectId: "c", base: nil) { _ in
                .reject(RooftopError(.sizeLimit, "full"))
            }
            try await expectCounters(sequence: fourth, records: 1, size: base + size(a2))

            let b3 = object("b", className: "U", version: 3, fields: ["n": 1])
            let seen = Recorder<ObjectWriteContext>()
            let fifth = try await write(storage, datastoreKey: key, objectId: "b", className: "U", base: nil, recorder: seen) {
                _ in
                StorageWrites.decision(b3, deleted: false)
            }
            #expect(seen.last?.datastore.recordCount == 1, "decide sees the counters before the write")
            #expect(seen.last?.datastore.sizeBytes == base + size(a2))
            guard case .written(let stored, _, _) = fifth, stored.sequence > fourth else {
                Issue.record("re-creating gave \(fifth)")
                return
            }
            try await expectCounters(sequence: stored.sequence, records: 2, size: base + size(a2) + size(b3))

            let untouched = try #require(try await storage.datastore(key: other.key))
            #expect(untouched.sequence == 0 && untouched.recordCount == 0 && untouched.sizeBytes == base)
        }
    }
}
