import Foundation
import RooftopShared
import Testing

@testable import Rooftop

/// Codable models mapped to and from object fields.
@Suite("Codable models", .timeLimit(.minutes(5)))
struct ModelTests {
    struct Stats: Codable, Hashable, Sendable {
        var wins: Int
        var ratio: Double
        var lastWin: Date?
        var badges: [String]
    }

    enum Level: String, Codable, Sendable { case easy, hard }

    struct GameScore: RooftopModel, Hashable {
        static let className = "GameScore"
        var objectId = ObjectID.generate()
        var score: Int
        var playerName: String
        var cheatMode = false
        var level = Level.easy
        var ratio: Double = 0.5
        var small: Int8 = 3
        var playedAt = Date(timeIntervalSince1970: 1_700_000_000.123)
        var avatar = Data([0, 1, 2, 255])
        var tags: [String] = []
        var history: [Int?] = []
        var stats: Stats?
        var location: GeoPoint?
        var author: Pointer?
        var nickname: String?
        var extra: Value?
        var createdAt: Date?
    }

    @Test("a model's fields are field values of the documented kinds")
    func mapping() throws {
        let model = GameScore(
            score: 1337, playerName: "Sean", tags: ["a", "b"], history: [1, nil],
            stats: Stats(wins: 2, ratio: 0.25, lastWin: Date(timeIntervalSince1970: 1), badges: ["x"]),
            location: try GeoPoint(latitude: 40.4, longitude: -3.7),
            author: Pointer(className: "_User", objectId: "u1"), extra: .decimal(try DecimalNumber("1.50")))
        let fields = try FieldEncoder.encode(model)
        #expect(fields.values["score"] == .int(1337))
        #expect(fields.values["playerName"] == "Sean")
        #expect(fields.values["cheatMode"] == .bool(false))
        #expect(fields.values["level"] == "easy")
        #expect(fields.values["ratio"] == .double(0.5))
        #expect(fields.values["small"] == .int(3))
        #expect(fields.values["playedAt"] == .date(Timestamp(millisecondsSinceEpoch: 1_700_000_000_123)))
        #expect(fields.values["avatar"] == .bytes(BinaryValue(Data([0, 1, 2, 255]))))
        #expect(fields.values["tags"] == .list(["a", "b"]))
        #expect(fields.values["history"] == .list([.int(1), .null]))
        #expect(fields.values["location"]?.geoPointValue?.latitude == 40.4)
        #expect(fields.values["author"] == .pointer(Pointer(className: "_User", objectId: "u1")))
        #expect(fields.values["extra"] == .decimal(try DecimalNumber("1.50")))
        #expect(
            fields.values["stats"]
                == .json(
                    .object([
                        "wins": .int(2), "ratio": .double(0.25), "lastWin": .string("1970-01-01T00:00:01.000Z"),
                        "badges": .array([.string("x")]),
                    ])))
        #expect(
            fields.values["objectId"] == nil && fields.values["createdAt"] == nil, "built-in fields are not written")
        #expect(fields.absent == ["nickname"], "nil optionals are reported absent")
    }

    @Test("models round-trip through objects")
    func roundTrip() throws {
        let (client, _) = try offlineClient()
        let model = GameScore(
            score: 7, playerName: "Ann", level: .hard, tags: ["t"], history: [nil, 2],
            stats: Stats(wins: 1, ratio: 1.5, lastWin: Date(timeIntervalSince1970: 1_700_000_000.5), badges: []),
            location: try GeoPoint(latitude: 1, longitude: 2), nickname: "A", extra: .list([1, "x"]))
        let object = client.object(GameScore.className, id: model.objectId)
        try object.assign(model)
        #expect(object.int("score") == 7)
        let decoded = try object.model(as: GameScore.self)
        #expect(decoded == model)
    }

    @Test("decoding reads built-in fields, converts exact numbers and reports mismatches as badType")
    func decoding() throws {
        let (client, _) = try offlineClient()
        var fields = try FieldEncoder.encode(GameScore(objectId: "g1", score: 0, playerName: "Bo")).values
        fields["score"] = .double(12)
        fields["ratio"] = .int(2)
        let object = client.core.adopt(
            ObjectSnapshot(
                className: "GameScore", objectId: "g1", fields: fields,
                createdAt: Timestamp(millisecondsSinceEpoch: 5000),
                version: 1))
        let model = try object.model(as: GameScore.self)
        #expect(model.objectId == "g1" && model.score == 12 && model.ratio == 2)
        #expect(model.createdAt == Date(timeIntervalSince1970: 5))
        #expect(model.nickname == nil && model.stats == nil)

        object["small"] = 300
        let overflow = #expect(throws: RooftopError.self) { try object.model(as: GameScore.self) }
        #expect(overflow?.code == .badType && overflow?.field == "small")
        object["small"] = 1
        object["score"] = 12.5
        let inexact = #expect(throws: RooftopError.self) { try object.model(as: GameScore.self) }
        #expect(inexact?.field == "score")
        object["score"] = "many"
        let mismatch = #expect(throws: RooftopError.self) { try object.model(as: GameScore.self) }
        #expect(mismatch?.code == .badType && mismatch?.field == "score")
        object["score"] = nil
        let missing = #expect(throws: RooftopError.self) { try object.model(as: GameScore.self) }
        #expect(missing?.field == "score")
    }

    @Test("assigning a model sets changed fields and unsets nil optionals only")
    func assign() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            var model = GameScore(score: 1, playerName: "Sean", nickname: "S")
            let object = try await client.save(model)
            #expect(try await server.object("GameScore", model.objectId)?.fields["nickname"] == "S")
            try await server.put("GameScore", model.objectId, ["foreign": 1])
            try await object.fetch()
            model.nickname = nil
            model.score = 2
            try object.assign(model)
            #expect(object.snapshot.fields["nickname"] == nil)
            #expect(object.int("foreign") == 1, "fields the model does not declare are left alone")
            guard case .update(let updates, _)? = object.pendingChange()?.change else {
                Issue.record("no pending change")
                return
            }
            #expect(updates == [FieldUpdate("score", .set(2)), FieldUpdate("nickname", .unset)])
        }
    }

    @Test("save(model, eventually:) queues the change; queries decode models")
    func saveAndQuery() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            server.isOnline = false
            let scores = [GameScore(score: 5, playerName: "A"), GameScore(score: 9, playerName: "B")]
            for score in scores { try await client.save(score, eventually: true) }
            #expect(try client.core.store.outbox(scope: client.core.scope).count == 2)
            let local = try await client.query(GameScore.self).fromLocalDatastore().order(by: "score", descending: true)
                .find(as: GameScore.self)
            #expect(local == scores.reversed())
            server.isOnline = true
            for score in [GameScore(score: 7, playerName: "C"), GameScore(score: 3, playerName: "D")] {
                try await client.save(score)
            }
            // The changes queued offline are sent now: their retry is due at a time of the test
            // clock that no one advances, and waiting for it hung one run under load.
            try await client.sync.push()
            #expect(try !client.outbox.hasPendingWrites)
            let remote = try await client.query(GameScore.self).where(Field("score") > 6).order(by: "score")
                .find().models(as: GameScore.self)
            #expect(remote.map(\.playerName) == ["C", "B"], "the queued saves reached the server once it could be reached")
            #expect(remote.allSatisfy { $0.createdAt != nil }, "the server's timestamps")
        }
    }

    @Test("a model that is not a keyed container is refused")
    func notKeyed() throws {
        struct Bare: RooftopModel {
            static let className = "Bare"
            var objectId: String { "b1" }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(1)
            }
            init() {}
            init(from decoder: any Decoder) throws {}
        }
        let (client, _) = try offlineClient()
        let error = #expect(throws: RooftopError.self) { try client.object("Bare", id: "b1").assign(Bare()) }
        #expect(error?.code == .badType)
    }
}

/// Models map Swift values as ``ValueConvertible`` does everywhere else: one mapping.
@Suite("Codable models: the one mapping of Swift values")
struct ModelValueMappingTests {
    struct Box<T: Codable & Sendable>: Codable, Sendable {
        var v: T
    }

    /// `value` in a model's property encodes to the field value `rooftopValue` gives, and that
    /// field value decodes back to `value`.
    private func expectOneMapping<T: Codable & Sendable & Equatable & LosslessValueConvertible>(
        _ value: T, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let fields = try FieldEncoder.encode(Box(v: value))
        #expect(fields.values["v"] == value.rooftopValue, "\(T.self)", sourceLocation: sourceLocation)
        let snapshot = ObjectSnapshot(className: "C", objectId: "o", fields: ["v": value.rooftopValue])
        #expect(try FieldDecoder.decode(Box<T>.self, from: snapshot).v == value, "\(T.self)", sourceLocation: sourceLocation)
        #expect(T(rooftopValue: value.rooftopValue) == value, sourceLocation: sourceLocation)
    }

    @Test("every scalar and special type encodes to its ValueConvertible value and reads back")
    func oneMapping() throws {
        try expectOneMapping(true)
        try expectOneMapping("text")
        try expectOneMapping(Int.min)
        try expectOneMapping(Int8(-8))
        try expectOneMapping(Int16(16))
        try expectOneMapping(Int32(-32))
        try expectOneMapping(Int64.max)
        try expectOneMapping(UInt8.max)
        try expectOneMapping(UInt16.max)
        try expectOneMapping(UInt32.max)
        try expectOneMapping(2.5)
        try expectOneMapping(Float(1.25))
        try expectOneMapping(Date(timeIntervalSince1970: 1_700_000_000.123))
        try expectOneMapping(Timestamp(millisecondsSinceEpoch: 42))
        try expectOneMapping(Data([1, 2, 3]))
        try expectOneMapping(BinaryValue(Data([4])))
        try expectOneMapping(try #require(URL(string: "https://example.com/a?b=c")))
        try expectOneMapping(try GeoPoint(latitude: 1, longitude: 2))
        try expectOneMapping(try Day("2026-11-27"))
        try expectOneMapping(try DecimalNumber("10.25"))
        try expectOneMapping(try #require(Decimal(string: "-12.5", locale: Locale(identifier: "en_US_POSIX"))))
        try expectOneMapping(JSONValue.object(["k": .array([.int(1), .null])]))
        try expectOneMapping(Pointer(className: "C", objectId: "p1"))
        try expectOneMapping(Relation(className: "C", objectIds: ["b", "a"]))
        try expectOneMapping(Value.list([.string("a"), .int(1)]))
    }

    @Test("UInt and UInt64 have no field value, in models as everywhere: refused when encoded and when decoded")
    func unsignedWordsRefused() throws {
        #expect {
            _ = try FieldEncoder.encode(Box(v: UInt64(7)))
        } throws: { error in
            "\(error)".contains("UInt64 has no field value")
        }
        #expect(throws: EncodingError.self) { _ = try FieldEncoder.encode(Box(v: UInt(7))) }
        let snapshot = ObjectSnapshot(className: "C", objectId: "o", fields: ["v": .int(7)])
        #expect {
            _ = try FieldDecoder.decode(Box<UInt64>.self, from: snapshot)
        } throws: { error in
            "\(error)".contains("UInt64 has no field value")
        }
    }

    @Test("a Decimal saved in Foundation's own form (before models stored it as a decimal) still reads back")
    func decimalInItsEarlierForm() throws {
        let value = try #require(Decimal(string: "3.75", locale: Locale(identifier: "en_US_POSIX")))
        let node = EncodingNode()
        try value.encode(to: NodeEncoder(node: node, codingPath: []))
        let earlier = try node.fieldValue(codingPath: [])
        #expect(earlier != value.rooftopValue, "the earlier form is not a decimal")
        let snapshot = ObjectSnapshot(className: "C", objectId: "o", fields: ["v": earlier])
        #expect(try FieldDecoder.decode(Box<Decimal>.self, from: snapshot).v == value)
        // Inside a nested struct too, where it is JSON that reads as no field value.
        guard case .json(let json) = earlier else {
            Issue.record("the earlier form is JSON: \(earlier)")
            return
        }
        let nested = ObjectSnapshot(className: "C", objectId: "o", fields: ["v": .json(.object(["v": json]))])
        #expect(try FieldDecoder.decode(Box<Box<Decimal>>.self, from: nested).v.v == value)
    }

    @Test("numbers read back only when exact, as the typed accessors read them")
    func exactNumbers() throws {
        func snapshot(_ value: Value) -> ObjectSnapshot {
            ObjectSnapshot(className: "C", objectId: "o", fields: ["v": value])
        }
        #expect(try FieldDecoder.decode(Box<Int>.self, from: snapshot(.double(3))).v == 3)
        #expect(throws: DecodingError.self) { _ = try FieldDecoder.decode(Box<Int>.self, from: snapshot(.double(3.5))) }
        #expect(throws: DecodingError.self) { _ = try FieldDecoder.decode(Box<Int8>.self, from: snapshot(.int(300))) }
        #expect(throws: DecodingError.self) {
            _ = try FieldDecoder.decode(Box<Double>.self, from: snapshot(.int(Int64(1) << 53 + 1)))
        }
        #expect(throws: DecodingError.self) { _ = try FieldDecoder.decode(Box<Float>.self, from: snapshot(.double(1e300))) }
    }
}
