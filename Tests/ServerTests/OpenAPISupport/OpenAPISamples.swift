import Foundation
@testable import RooftopServer
import RooftopShared

/// Wire values covering every shape the server sends or reads (every value kind, field operation,
/// change kind, result status, predicate, optional member present and absent), each with the
/// component schema it must validate against.
enum OpenAPISamples {
    /// A sample: a label, the value and its schema.
    struct Sample {
        var label: String
        var value: any Encodable
        var schema: String
    }

    static let time = Timestamp(millisecondsSinceEpoch: 1_763_779_346_123)

    /// One value of every kind, with doubles that break naive encodings.
    static var everyValueKind: [String: Value] {
        get throws {
            [
                "null": .null, "bool": .bool(true), "int": .int(.min), "double": .double(1.5),
                "negativeZero": .double(-0.0), "nan": .double(.nan), "infinity": .double(-.infinity),
                "tiny": .double(.leastNonzeroMagnitude), "string": .string("é😀/\u{0}"), "date": .date(time),
                "bytes": .bytes(BinaryValue(Data([0, 1, 255]), mimeType: "image/png")),
                "bytesPlain": .bytes(BinaryValue(Data(), mimeType: nil)),
                "decimal": .decimal(try DecimalNumber("-1.50e+3")), "decimalShort": .decimal(try DecimalNumber(".5")),
                "geoPoint": .geoPoint(try GeoPoint(latitude: -90, longitude: 180)),
                "day": .day(try Day("2026-11-22")),
                "json": .json(.object(["a": .array([.int(1), .double(2.5), .null, .bool(false), .string("x")])])),
                "pointer": .pointer(Pointer(className: "Post", objectId: "abc")),
                "relation": .relation(Relation(className: "User", objectIds: ["b", "a"])),
                "list": .list([.int(1), .list([.string("nested"), .double(3.25)]), .null]),
            ]
        }
    }

    static var snapshot: ObjectSnapshot {
        get throws {
            var acl = ACL()
            acl.setReadAccess(true, for: .everyone)
            acl.setWriteAccess(true, for: .user("u1"))
            acl.setReadAccess(true, for: .role("Team"))
            return ObjectSnapshot(
                className: "GameScore", objectId: "01jd0s8m6bz8r1w0q2a3c4d5e6", datastore: .app,
                fields: try everyValueKind, acl: acl, createdAt: time, updatedAt: time, version: 7,
                fieldVersions: ["score": 3, "name": 7])
        }
    }

    static let minimalSnapshot = ObjectSnapshot(className: "Note", objectId: "n1", datastore: .default)

    static var everyOperation: [FieldOperation] {
        [
            .set(.string("x")), .unset, .increment(.int(2)), .increment(.double(0.5)),
            .listAppend([.int(1), .null]), .listInsert(index: 0, value: .bool(true)), .listRemove(index: 2),
            .listMove(from: 0, to: 3), .listReplace(index: 1, value: .date(time)),
            .relationAdd(className: "User", objectIds: ["u1", "u2"]), .relationRemove(className: "User", objectIds: []),
        ]
    }

    static var mutations: [Mutation] {
        get throws {
            var acl = ACL()
            acl.setReadAccess(true, for: .everyone)
            let updates = everyOperation.enumerated().map { FieldUpdate("f\($0.offset)", $0.element) }
            return [
                Mutation(
                    mutationId: try MutationID("m1"), datastore: .app, className: "GameScore", objectId: "o1",
                    baseVersion: 3, change: .update(updates, acl: acl)),
                Mutation(
                    mutationId: try MutationID("m2"), datastore: try DatastoreID(".Xy3"), className: "GameScore",
                    objectId: "o2", change: .delete),
                Mutation(datastore: .default, className: "Note", objectId: "n1", change: .update([])),
            ]
        }
    }

    static var merges: [MergeDecision] {
        [
            MergeDecision(
                field: "score", baseValue: .int(10), localValue: .int(15), remoteValue: .int(20), rule: .sum,
                result: .int(25), resolution: .rule),
            MergeDecision(
                field: "tags", baseValue: nil, localValue: .null, remoteValue: nil, rule: .remote, result: nil,
                resolution: .objectDeleted),
            MergeDecision(
                field: "list", baseValue: .list([]), localValue: .list([.int(1)]), remoteValue: .list([.int(2)]),
                rule: .local, result: .list([.int(1), .int(2)]), resolution: .listTransform),
        ]
    }

    static var predicate: QueryPredicate {
        get throws {
            let point = try GeoPoint(latitude: 40.4, longitude: -3.7)
            let northeast = try GeoPoint(latitude: 41, longitude: -3)
            return .and([
                .comparison(field: "score", op: .greaterOrEqual, value: .int(100)),
                .or([.in(field: "tag", values: [.string("a"), .double(1.5)]), .notIn(field: "tag", values: [])]),
                .not(.exists(field: "deleted")),
                .notExists(field: "archived"),
                .startsWith(field: "name", prefix: "Se"),
                .listContains(field: "tags", value: .string("a")),
                .containsAll(field: "tags", values: [.string("a"), .pointer(Pointer(className: "T", objectId: "t"))]),
                .near(field: "at", point: point, maxDistanceMeters: 1000),
                .near(field: "at", point: point, maxDistanceMeters: nil),
                .withinBox(field: "at", southwest: point, northeast: northeast),
                .thisIn(["o1", .pointer(Pointer(className: "GameScore", objectId: "o2"))]),
                .comparison(field: "createdAt", op: .notEqual, value: .date(time)),
            ])
        }
    }

    static var query: Query {
        get throws {
            Query(
                className: "GameScore", predicate: try predicate, order: [QueryOrder("score", descending: true)],
                limit: 10, offset: 5, includes: [["author"], ["author", "company"]])
        }
    }
}
