import Foundation
import RooftopShared
import Testing

/// A change's plain `fields`: what a creation sends instead of one operation per field.
@Suite("Wire: plain fields in a change")
struct PlainFieldsWireTests {
    private func encoded(_ change: ObjectChange) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(change), as: UTF8.self)
    }

    private func decode(_ json: String) throws -> ObjectChange {
        try JSONDecoder().decode(ObjectChange.self, from: Data(json.utf8))
    }

    @Test func aCreationTravelsAsPlainFields() throws {
        let change = ObjectChange.update([
            FieldUpdate("age", .set(36)), FieldUpdate("name", .set("Ada")), FieldUpdate("score", .increment(1)),
        ])
        let text = try encoded(change)
        #expect(
            text == #"{"fields":{"age":36,"name":"Ada"},"update":[{"do":{"amount":1,"op":"increment"},"field":"score"}]}"#)
        #expect(try decode(text) == change)
        // Only sets: no `update` member at all.
        let sets = ObjectChange.update([FieldUpdate("a", .set(1)), FieldUpdate("b", .set([1, 2]))], acl: .only("u1"))
        #expect(try encoded(sets) == #"{"acl":{"u1":{"read":true,"write":true}},"fields":{"a":1,"b":[1,2]}}"#)
        #expect(try decode(encoded(sets)) == sets)
        // Nothing to set: the empty update is written as before.
        #expect(try encoded(.update([])) == #"{"update":[]}"#)
        #expect(try decode(encoded(.update([]))) == .update([]))
    }

    @Test func fieldsApplyFirstInNameOrderThenTheUpdates() throws {
        let change = try decode(
            #"{"fields": {"b": 2, "a": 1}, "update": [{"field": "a", "do": {"op": "increment", "amount": 5}}]}"#)
        #expect(
            change
                == .update([FieldUpdate("a", .set(1)), FieldUpdate("b", .set(2)), FieldUpdate("a", .increment(5))]))
        // The REST body reads its `fields` by the same rule.
        let body = ObjectWriteBody(fields: ["b": 2, "a": 1], update: [FieldUpdate("a", .increment(5))])
        #expect(body.updates() == change.updates)
    }

    @Test func orderingSortsOnlyTheLeadingSetsOfDistinctFields() {
        let updates = [
            FieldUpdate("z", .set(1)), FieldUpdate("m", .set(2)), FieldUpdate("z", .set(3)),
            FieldUpdate("a", .set(4)), FieldUpdate("n", .increment(1)),
        ]
        // `z` is set twice: the run stops before the second set, which must stay after the first.
        #expect(
            ObjectChange.update(ordering: updates)
                == .update([
                    FieldUpdate("m", .set(2)), FieldUpdate("z", .set(1)), FieldUpdate("z", .set(3)),
                    FieldUpdate("a", .set(4)), FieldUpdate("n", .increment(1)),
                ]))
        #expect(ObjectChange.update(ordering: [FieldUpdate("n", .increment(1)), FieldUpdate("a", .set(1))])
            == .update([FieldUpdate("n", .increment(1)), FieldUpdate("a", .set(1))]))
    }

    @Test func anyChangeSurvivesTheWireExactly() throws {
        var generator = SystemRandomNumberGenerator()
        let names = ["a", "b", "c", "d"]
        for _ in 0..<500 {
            let updates = (0..<Int.random(in: 0...6, using: &generator)).map { _ -> FieldUpdate in
                let field = names.randomElement(using: &generator) ?? "a"
                switch Int.random(in: 0..<4, using: &generator) {
                case 0, 1: return FieldUpdate(field, .set(.int(Int64.random(in: -9...9, using: &generator))))
                case 2: return FieldUpdate(field, .unset)
                default: return FieldUpdate(field, .increment(1))
                }
            }
            for change in [ObjectChange.update(updates), .update(ordering: updates)] {
                #expect(try decode(encoded(change)) == change, "\(updates)")
            }
        }
    }

    @Test(
        "malformed plain fields are refused",
        arguments: [
            #"{"delete": true, "fields": {}}"#,
            #"{"fields": {"": 1}}"#,
            #"{"fields": {"a b": 1}}"#,
            #"{"fields": [1]}"#,
            #"{"fields": {"a": {"$unknown": 1}}}"#,
        ])
    func refused(_ json: String) {
        #expect(throws: DecodingError.self) { try decode(json) }
    }
}
