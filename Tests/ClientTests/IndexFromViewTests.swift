import Foundation
import GRDB
import RooftopShared
import RooftopTestSupport
import Testing

@testable import Rooftop

/// An object's index rows updated from its previous local view (a queued save's path,
/// ``StoreTransaction/put(_:server:local:deleted:fresh:synced:prepared:previous:)``) are the rows
/// the stored-rows path writes, for random pairs of views.
@Suite("Local index: rows updated from the previous view")
struct IndexFromViewTests {
    private static func snapshot(_ className: String, _ fields: [String: Value], updatedAt: Int64) -> ObjectSnapshot {
        ObjectSnapshot(
            className: className, objectId: "n1", datastore: .app, fields: fields, acl: .publicReadWrite,
            createdAt: Timestamp(millisecondsSinceEpoch: 1_000), updatedAt: Timestamp(millisecondsSinceEpoch: updatedAt),
            version: 3)
    }

    /// Every index row and entry of the store, as text, keys in hex (object keys are the same in
    /// both stores: each holds one object).
    private static func rows(_ store: LocalStore) throws -> [String] {
        try store.read { db in
            var all: [String] = []
            for (table, order) in [
                ("object_fields", "field"), ("object_elements", "field, element_key"), ("index_entries", "partition, k1, k2, k3, k4"),
            ] {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY \(order)") {
                    let columns = row.columnNames.map { name -> String in
                        let value: DatabaseValue = row[name]
                        if case .blob(let bytes) = value.storage {
                            return name + "=x" + bytes.map { String(format: "%02x", $0) }.joined()
                        }
                        return "\(name)=\(value)"
                    }
                    all.append("\(table) " + columns.joined(separator: " "))
                }
            }
            return all
        }
    }

    private static func fields(_ random: inout SeededGenerator) -> [String: Value] {
        var fields: [String: Value] = [:]
        for index in 0..<Int(random.next() % 6) {
            let name = ["a", "b", "c", "d", "e", "tags"][index]
            switch random.next() % 5 {
            case 0: fields[name] = .int(Int64(random.next() % 3))
            case 4:
                // JSON values `==` holds equal while their keys differ: an integer and a double of
                // the same value past 2^53, keys composed and decomposed.
                let values: [JSONValue] = [
                    .int(1_700_000_000_000_000_000), .double(1.7e18), .object(["\u{E9}": .int(1)]),
                    .object(["e\u{301}": .int(1)]),
                ]
                fields[name] = .json(values[Int(random.next() % 4)])
            case 1: fields[name] = .list([.string("x"), .string("y\(random.next() % 2)")])
            case 2: fields[name] = .string(String(repeating: "z", count: Int(random.next() % 2) * 2_000 + 1))
            default: fields[name] = RandomValues.edges.value(&random, depth: 2)
            }
        }
        return fields
    }

    @Test("a JSON field whose value `==` holds equal to the previous one gets the new value's rows")
    func looselyEqualJSON() throws {
        let pairs: [(JSONValue, JSONValue)] = [
            (.int(1_700_000_000_000_000_000), .double(1.7e18)), (.object(["\u{E9}": .int(1)]), .object(["e\u{301}": .int(1)])),
        ]
        for (first, second) in pairs {
            #expect(Value.json(first) == Value.json(second), "the premise: `==` holds them equal")
            let before = Self.snapshot("Note", ["j": .json(first)], updatedAt: 2_000)
            let after = Self.snapshot("Note", ["j": .json(second)], updatedAt: 2_000)
            let fast = try LocalStore(.inMemory)
            let slow = try LocalStore(.inMemory)
            let key = ObjectKey(before)
            try fast.write(scope: "s") { transaction in
                try transaction.put(key, server: before, local: before, deleted: false)
                try transaction.put(key, server: before, local: after, deleted: false, previous: before)
            }
            try slow.write(scope: "s") { transaction in try transaction.put(key, server: after, local: after, deleted: false) }
            #expect(try Self.rows(fast) == Self.rows(slow), "\(first) → \(second)")
        }
    }

    @Test("rows from the previous view equal rows rebuilt from the stored ones, with and without declared indexes")
    func sameRows() throws {
        var random = SeededGenerator(seed: 0x1DE7)
        for round in 0..<150 {
            let className = round % 2 == 0 ? "Note" : "Item"
            let fast = try LocalStore(.inMemory)
            let slow = try LocalStore(.inMemory)
            for store in [fast, slow] { try store.declareIndexes([["a", "b"], ["tags"]], of: "Item") }
            let before = Self.snapshot(className, Self.fields(&random), updatedAt: 2_000)
            var after = Self.snapshot(className, Self.fields(&random), updatedAt: random.next() % 2 == 0 ? 2_000 : 3_000)
            if random.next() % 3 == 0 { after.fields = before.fields.merging(["a": .int(Int64(round))]) { $1 } }
            let key = ObjectKey(before)
            for store in [fast, slow] {
                try store.write(scope: "s") { transaction in
                    try transaction.put(key, server: before, local: before, deleted: false)
                }
            }
            try fast.write(scope: "s") { transaction in
                try transaction.put(key, server: before, local: after, deleted: false, previous: before)
            }
            try slow.write(scope: "s") { transaction in
                try transaction.put(key, server: before, local: after, deleted: false)
            }
            let expected = try Self.rows(slow)
            #expect(try Self.rows(fast) == expected, "round \(round): \(before.fields) → \(after.fields)")
            #expect(!expected.isEmpty)
        }
    }
}
