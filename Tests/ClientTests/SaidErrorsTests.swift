import Foundation
@testable import Rooftop
import RooftopShared
import Testing

/// Errors the client once dropped without a word are said: returned to the caller, thrown with
/// their reason, or logged.
@Suite("Client: errors are said, not dropped")
struct SaidErrorsTests {
    private func row(_ change: ObjectChange, base: Int64?, seq: Int64 = 1) -> OutboxRow {
        OutboxRow(
            seq: seq,
            mutation: Mutation(datastore: .app, className: "C", objectId: "o1", baseVersion: base, change: change),
            state: .pending, attempts: 0, lastError: nil, nextAttemptAt: nil)
    }

    @Test("a queued change that no longer applies is left out of the local view and named with its reason")
    func localViewSkips() {
        let key = ObjectKey(datastore: .app, className: "C", objectId: "o1")
        let server = ObjectSnapshot(className: "C", objectId: "o1", datastore: .app, fields: ["n": "text"], acl: nil, version: 2)
        let increment = Mutation(
            datastore: .app, className: "C", objectId: "o1", baseVersion: 1, change: .update([FieldUpdate("n", .increment(1))]))
        let set = Mutation(
            datastore: .app, className: "C", objectId: "o1", baseVersion: 1, change: .update([FieldUpdate("m", .set(2))]))
        let local = LocalView.compute(key: key, server: server, queued: [increment, set])
        #expect(local.view?.fields == ["n": "text", "m": 2], "the change that applies is in the view")
        #expect(!local.deleted)
        #expect(local.skipped.map(\.mutation) == [increment.mutationId])
        #expect(local.skipped.first?.error.code == .badType, "\(String(describing: local.skipped.first?.error))")
        // Said once: the view is computed again with every page or save touching the object.
        #expect(local.takeUnsaid().map(\.mutation) == [increment.mutationId])
        #expect(LocalView.compute(key: key, server: server, queued: [increment, set]).takeUnsaid().isEmpty)
        #expect(LocalView.compute(key: key, server: server, queued: [increment, set]).skipped.count == 1)
    }

    @Test("the set of changes already said keeps the most recent, bounded, at ten times its capacity")
    func recentSetBounded() {
        var said = RecentSet<Int>(capacity: 1_000)
        for member in 0..<10_000 {
            let new = said.insert(member)
            let again = said.insert(member)
            #expect(new && !again, "\(member)")
        }
        #expect(said.count == 1_000)
        #expect(said.contains(9_999) && said.contains(9_000) && !said.contains(8_999) && !said.contains(0))
        // The forgotten are new again; the oldest kept goes to make room.
        let forgotten = said.insert(0)
        #expect(forgotten)
        #expect(!said.contains(9_000) && said.contains(9_001) && said.count == 1_000)
    }

    @Test("a rebase whose queued change does not apply throws the merge's reason; one that does not apply at all is nil")
    func rebaseThrows() throws {
        // The server turned `n` into a string at version 2; a queued increment of it, made at
        // version 1, cannot be rebased over that.
        let object = ObjectSnapshot(className: "C", objectId: "o1", datastore: .app, fields: ["n": "text"], acl: nil, version: 2)
        let records = [OperationRecord(version: 2, change: .update([FieldUpdate("n", .set("text"))]), priorValues: ["n": "old"])]
        let rows = [row(.update([FieldUpdate("n", .increment(1))]), base: 1)]
        #expect(throws: RooftopError.self) {
            try Rebase.over(object, records: records, rows: rows, rules: MergeRules())
        }
        // A change that applies rebases; rows made on another base are not rebased (nil), as before.
        let applies = try Rebase.over(
            object, records: records, rows: [row(.update([FieldUpdate("m", .set(1))]), base: 1)], rules: MergeRules())
        #expect(applies?.result.change != nil)
        #expect(try Rebase.over(object, records: records, rows: [row(.update([FieldUpdate("m", .set(1))]), base: 2)], rules: MergeRules()) == nil)
        let server = ObjectSnapshot(className: "C", objectId: "o1", datastore: .app, fields: ["n": "old"], acl: nil, version: 1)
        #expect(throws: RooftopError.self) {
            try Rebase.overDelete(
                key: ObjectKey(object), version: 2, server: server,
                rows: [row(.update([FieldUpdate("n", .increment(1))]), base: 1)], rules: MergeRules())
        }
    }

    struct Place: Codable {
        struct Spot: Codable { var at: GeoPoint }
        var spot: Spot
    }

    @Test("a model's nested JSON that does not read as its type says why, with the reading's own error")
    func nestedJSONSaysWhy() throws {
        let snapshot = ObjectSnapshot(
            className: "Place", objectId: "p1", datastore: .app,
            fields: ["spot": .json(.object(["at": .object(["$geoPoint": .string("north")])]))], acl: nil, version: 1)
        do {
            _ = try FieldDecoder.decode(Place.self, from: snapshot)
            Issue.record("decoded a point from a string")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.underlyingError != nil, "the reading's own error is kept")
            #expect(context.codingPath.map(\.stringValue) == ["spot", "at"])
        }
        // A good point still reads.
        let good = ObjectSnapshot(
            className: "Place", objectId: "p1", datastore: .app,
            fields: ["spot": .json(.object(["at": JSONValue(embedding: .geoPoint(try GeoPoint(latitude: 1, longitude: 2)))]))],
            acl: nil, version: 1)
        #expect(try FieldDecoder.decode(Place.self, from: good).spot.at == (try GeoPoint(latitude: 1, longitude: 2)))
    }
}
