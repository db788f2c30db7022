import Foundation
import RooftopShared
import RooftopTestSupport

/// Inputs for the fuzz run.
enum FuzzCorpus {
    /// Valid bodies for each endpoint, to mutate.
    static func seeds() throws -> [(String, Data)] {
        let encoder = JSONEncoder()
        let datastore = try DatastoreID("fuzz")
        let push = PushRequest(mutations: [
            Mutations.create(
                datastore, "Item", "g1",
                fields: ["n": 1, "s": "text", "d": .double(1.5), "when": .date(Timestamp(millisecondsSinceEpoch: 1))]),
            Mutations.update(
                datastore, "Item", "f1", base: 1,
                [
                    FieldUpdate("n", .increment(2)), FieldUpdate("list", .listInsert(index: 1, value: "x")),
                    FieldUpdate("list", .listMove(from: 0, to: 2)), FieldUpdate("gone", .unset),
                ]),
            Mutations.delete(datastore, "Item", "f2", base: 1),
        ])
        let query = QueryRequest.query(
            Query(
                className: "Item",
                predicate: .and([.comparison(field: "n", op: .greater, value: 0), .in(field: "s", values: ["a", "b"])]),
                order: [QueryOrder("n", descending: true)], limit: 10, offset: 1))
        let text = QueryRequest.text(
            className: "Item", text: "where n >= ? and s starts with 'te' order by n desc limit 5", parameters: [1])
        return [
            ("/v1/push", try encoder.encode(push)),
            ("/v1/push", try encoder.encode(push)),
            ("/v1/pull", try encoder.encode(PullRequest(datastore: datastore, limit: 2, classes: ["Item"]))),
            ("/v1/datastores/fuzz/query", try encoder.encode(query)),
            ("/v1/datastores/fuzz/query", try encoder.encode(text)),
            ("/v1/datastores/fuzz/count", try encoder.encode(text)),
        ]
    }

    /// Fragments worth splicing into JSON.
    static let fragments = [
        "{", "}", "[", "]", ",", ":", "\"", "\\", "null", "true", "-1", "0", "1e999", "-0.0", "9223372036854775808",
        #"{"$double":"x"}"#, #"{"$date":1e30}"#, #""\u0000""#, #""\ud800""#, #""op""#, #""increment""#, #""listMove""#,
        #""a;DROP TABLE objects""#, #""'""#, "\u{FEFF}", #"{"not":{"not":{}}}"#, #"[[[[[[[[[[]]]]]]]]]]"#,
        #""fuzz""#, #""Item""#, #""$relation""#, "   ", "\n",
    ]

    /// Keys of the real request types, and some that are not.
    static let keys = [
        "mutations", "mutationId", "datastore", "className", "objectId", "baseVersion", "change", "fields", "update", "delete",
        "acl", "field", "do", "op", "value", "values", "index", "from", "to", "amount", "query", "predicate", "order",
        "limit", "offset", "includes", "text", "parameters", "since", "classes", "and", "or", "not", "$double",
        "$json", "$where", "__proto__", "", "a;DROP TABLE objects",
    ]

    /// A valid body with 1-4 random edits: flipped bytes, spliced fragments, cut or doubled ranges.
    static func mutate(_ body: Data, using random: inout SeededGenerator) -> Data {
        var bytes = Array(body)
        for _ in 0..<(1 + Int(random.next() % 4)) where !bytes.isEmpty {
            let position = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 5 {
            case 0: bytes[position] = UInt8(truncatingIfNeeded: random.next())
            case 1:
                let fragment = fragments[Int(random.next() % UInt64(fragments.count))]
                bytes.insert(contentsOf: Array(fragment.utf8), at: position)
            case 2:
                let end = min(bytes.count, position + 1 + Int(random.next() % 16))
                bytes.removeSubrange(position..<end)
            case 3:
                let end = min(bytes.count, position + 1 + Int(random.next() % 32))
                bytes.insert(contentsOf: bytes[position..<end], at: end)
            default: bytes = Array(bytes.prefix(position))
            }
        }
        return Data(bytes)
    }

    /// A random JSON document built from the real keys and hostile values.
    static func randomDocument(using random: inout SeededGenerator, depth: Int) -> String {
        let choice = depth > 5 ? random.next() % 4 : random.next() % 7
        switch choice {
        case 0:
            return ["0", "1", "-1", "9223372036854775807", "-9223372036854775808", "1.5", "1e308", "2"][
                Int(random.next() % 8)]
        case 1:
            return [#""fuzz""#, #""Item""#, #""f1""#, #""""#, #""set""#, #""increment""#, #""x y""#][
                Int(random.next() % 7)]
        case 2: return ["true", "false", "null"][Int(random.next() % 3)]
        case 3:
            return fragments[Int(random.next() % UInt64(fragments.count))].hasPrefix("{") ? #"{"$double":"1"}"# : "[]"
        case 4, 5:
            let count = Int(random.next() % 5)
            let members = (0..<count).map { _ in
                let key = keys[Int(random.next() % UInt64(keys.count))]
                return "\"\(key)\": \(randomDocument(using: &random, depth: depth + 1))"
            }
            return "{" + members.joined(separator: ", ") + "}"
        default:
            let count = Int(random.next() % 4)
            return "["
                + (0..<count).map { _ in randomDocument(using: &random, depth: depth + 1) }.joined(separator: ", ")
                + "]"
        }
    }
}
