import Foundation
import RooftopShared
import Testing

/// Shared fixtures for the query tests.
enum QueryFixtures {
    static func geo(_ latitude: Double, _ longitude: Double) throws -> GeoPoint {
        try GeoPoint(latitude: latitude, longitude: longitude)
    }

    static let madrid = (40.4168, -3.7038)
    static let paris = (48.8566, 2.3522)
    static let sydney = (-33.8688, 151.2093)
    static let fiji = (-17.7134, 178.065)
    static let samoa = (-17.0, -179.5)

    static func user(_ id: String) -> Pointer { Pointer(className: "_User", objectId: id) }

    static let t0 = Timestamp(millisecondsSinceEpoch: 1_700_000_000_000)

    /// Six GameScores covering every kind the operators care about, plus one object of another
    /// class that must never be a result:
    ///
    /// | id | score | name | tags | location | level | extra |
    /// |---|---|---|---|---|---|---|
    /// | s1 | int 10 | Sean | [a, b] | Madrid | 1 | author u1, friends {u1, u2}, when: date t0 |
    /// | s2 | double 10.0 | Sebastian | [b] | Paris | 2 | author u2, when: day |
    /// | s3 | "high" | Ana | [] | Sydney | 1 | |
    /// | s4 | null | sean | [a, 1] | Fiji (178.065) | 2 | |
    /// | s5 | missing | missing | missing | Samoa (-179.5) | missing | author u3 (not found) |
    /// | s6 | double 2.5 | Seán | [c] | missing | 1 | |
    static func scores() throws -> [ObjectSnapshot] {
        func score(_ id: String, _ fields: [String: Value], createdAt: Int64) -> ObjectSnapshot {
            ObjectSnapshot(
                className: "GameScore", objectId: id, fields: fields,
                createdAt: Timestamp(millisecondsSinceEpoch: t0.millisecondsSinceEpoch + createdAt))
        }
        return [
            score(
                "s1",
                [
                    "score": 10, "name": "Sean", "tags": ["a", "b"], "level": 1,
                    "location": .geoPoint(try geo(madrid.0, madrid.1)), "author": .pointer(user("u1")),
                    "friends": .relation(Relation(className: "_User", objectIds: ["u2", "u1"])),
                    "when": .date(t0),
                ], createdAt: 3),
            score(
                "s2",
                [
                    "score": .double(10), "name": "Sebastian", "tags": ["b"], "level": 2,
                    "location": .geoPoint(try geo(paris.0, paris.1)), "author": .pointer(user("u2")),
                    "when": .day(Day(daysSinceEpoch: 19_000)),
                ], createdAt: 1),
            score(
                "s3",
                ["score": "high", "name": "Ana", "tags": [], "level": 1, "location": .geoPoint(try geo(sydney.0, sydney.1))],
                createdAt: 2),
            score(
                "s4",
                ["score": .null, "name": "sean", "tags": ["a", 1], "level": 2, "location": .geoPoint(try geo(fiji.0, fiji.1))],
                createdAt: 6),
            score("s5", ["location": .geoPoint(try geo(samoa.0, samoa.1)), "author": .pointer(user("u3"))], createdAt: 5),
            score("s6", ["score": 2.5, "name": "Seán", "tags": ["c"], "level": 1], createdAt: 4),
            ObjectSnapshot(className: "Other", objectId: "o1", fields: ["score": 10, "name": "Sean"]),
        ]
    }

    /// The objects pointers lead to: u1 (readable, company c1), u2 (not readable), c1.
    static func pointees() -> [ObjectSnapshot] {
        [
            ObjectSnapshot(
                className: "_User", objectId: "u1",
                fields: ["name": "Ursula", "company": .pointer(Pointer(className: "Company", objectId: "c1"))]),
            ObjectSnapshot(
                className: "_User", objectId: "u2",
                fields: ["secret": true, "company": .pointer(Pointer(className: "Company", objectId: "c2"))]),
            ObjectSnapshot(className: "Company", objectId: "c1", fields: ["name": "Acme"]),
            ObjectSnapshot(className: "Company", objectId: "c2", fields: ["name": "Hidden Inc"]),
        ]
    }

    /// Runs a query over the fixtures (u2 is unreadable) and returns the result.
    static func run(_ query: Query, canRead: (ObjectSnapshot) -> Bool = { $0.objectId != "u2" }) throws -> QueryResult {
        let all = try scores() + pointees()
        return QueryEvaluator.run(
            query, over: try scores(),
            lookup: { pointer in all.first { $0.className == pointer.className && $0.objectId == pointer.objectId } },
            canRead: canRead)
    }

    /// The IDs of the GameScores matching a predicate, in result order (no explicit order: by
    /// objectId, or by distance).
    static func ids(_ predicate: QueryPredicate) throws -> [String] {
        try run(Query("GameScore").where(predicate)).objects.map(\.objectId)
    }

    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    /// The message of a decoding error, wherever it sits in the `DecodingError`.
    static func decodingMessage(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context)?, .keyNotFound(_, let context)?, .typeMismatch(_, let context)?,
            .valueNotFound(_, let context)?:
            context.debugDescription
        default:
            "\(error)"
        }
    }
}
