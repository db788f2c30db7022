import Foundation
import RooftopShared
import Testing

@Suite("Swift values as field values")
struct ValueConvertibleTests {
    @Test("each Swift type converts to its kind and reads back identical")
    func roundTrips() throws {
        func check<T: LosslessValueConvertible & Equatable>(_ value: T, _ expected: Value) {
            #expect(value.rooftopValue == expected, "\(T.self) \(value)")
            #expect(T(rooftopValue: expected) == value, "\(T.self) \(value) read back")
        }
        check(true, .bool(true))
        check("text", .string("text"))
        check(Int(42), .int(42))
        check(Int8(-128), .int(-128))
        check(Int16.max, .int(Int64(Int16.max)))
        check(Int32.min, .int(Int64(Int32.min)))
        check(Int64.max, .int(.max))
        check(UInt8(255), .int(255))
        check(UInt16.max, .int(65535))
        check(UInt32.max, .int(4_294_967_295))
        check(0.1, .double(0.1))
        check(-0.0 as Double, .double(-0.0))
        check(Float(0.5), .double(0.5))
        let date = Date(timeIntervalSince1970: 1_763_779_346.123)
        #expect(date.rooftopValue == .date(Timestamp(millisecondsSinceEpoch: 1_763_779_346_123)))
        check(Date(timeIntervalSince1970: 1_763_779_346), .date(Timestamp(millisecondsSinceEpoch: 1_763_779_346_000)))
        check(Data([0, 1, 255]), .bytes(BinaryValue(Data([0, 1, 255]))))
        check(Decimal(string: "12.50")!, .decimal(try DecimalNumber("12.5")))
        check(URL(string: "https://example.com/a?b=c")!, .string("https://example.com/a?b=c"))
        check(Timestamp(millisecondsSinceEpoch: -1), .date(Timestamp(millisecondsSinceEpoch: -1)))
        check(try GeoPoint(latitude: 40.4, longitude: -3.7), .geoPoint(try GeoPoint(latitude: 40.4, longitude: -3.7)))
        check(try Day("2026-11-24"), .day(try Day("2026-11-24")))
        check(JSONValue.object(["a": .int(1)]), .json(.object(["a": .int(1)])))
        check(Pointer(className: "_User", objectId: "u1"), .pointer(Pointer(className: "_User", objectId: "u1")))
        check(Relation(className: "_User", objectIds: ["b", "a"]), .relation(Relation(className: "_User", objectIds: ["a", "b"])))
        check(BinaryValue(Data([9]), mimeType: "image/png"), .bytes(BinaryValue(Data([9]), mimeType: "image/png")))
        check(try DecimalNumber("1.50"), .decimal(try DecimalNumber("1.50")))
        check(["a", "b"], .list(["a", "b"]))
        check([[1, 2], [3]], .list([.list([1, 2]), .list([3])]))
        check([Date?.none, Date(timeIntervalSince1970: 0)], .list([.null, .date(Timestamp(millisecondsSinceEpoch: 0))]))
        check(["n": 1, "m": 2], .json(.object(["n": .int(1), "m": .int(2)])))
        check(Value.string("v"), .string("v"))
    }

    @Test("a value that does not fit the type, or another kind, reads as nil")
    func mismatches() {
        #expect(Int8(rooftopValue: .int(300)) == nil)
        #expect(UInt8(rooftopValue: .int(-1)) == nil)
        #expect(Int(rooftopValue: .double(2.5)) == nil)
        #expect(Int(rooftopValue: .double(3.0)) == 3, "an integral double reads as an int")
        #expect(Int(rooftopValue: .string("3")) == nil)
        #expect(Double(rooftopValue: .int(3)) == 3.0)
        #expect(Double(rooftopValue: .int(.max)) == nil, "2^63 - 1 is no Double")
        #expect(Float(rooftopValue: .double(1e300)) == nil, "finite but beyond Float")
        #expect(Float(rooftopValue: .double(.infinity)) == .infinity)
        #expect(String(rooftopValue: .int(1)) == nil)
        #expect(Date(rooftopValue: .int(0)) == nil)
        #expect(URL(rooftopValue: .string("")) == nil)
        #expect([Int](rooftopValue: .list([1, "a"])) == nil)
        #expect([String: Int](rooftopValue: .json(.object(["a": .string("x")]))) == nil)
        #expect(Decimal(rooftopValue: .int(7)) == Decimal(7))
        // Optionals: null is nil; another kind is a failure, not nil.
        #expect(Int?(rooftopValue: .null) == .some(nil))
        #expect(Int?(rooftopValue: .int(1)) == .some(1))
        #expect(Int?(rooftopValue: .string("1")) == nil)
        #expect((nil as Int?).rooftopValue == .null)
        #expect(Decimal.nan.rooftopValue.doubleValue?.isNaN == true)
    }

    @Test("JSON inside a json value: dates as ISO text, bytes as base64, other kinds in the portable form")
    func embedding() throws {
        let values: [Value] = [
            .decimal(try DecimalNumber("1.50")), .geoPoint(try GeoPoint(latitude: 40.5, longitude: -3.25)),
            .day(try Day("2026-11-24")), .pointer(Pointer(className: "P", objectId: "p1")),
            .relation(Relation(className: "U", objectIds: ["a", "b"])),
        ]
        for value in values {
            // The same form the portable encoding gives (it is what a json field reads back).
            let portable = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
            #expect(JSONValue(embedding: value) == portable, "\(value)")
        }
        #expect(JSONValue(embedding: .date(Timestamp(millisecondsSinceEpoch: 0))) == .string("1970-01-01T00:00:00.000Z"))
        #expect(JSONValue(embedding: .bytes(BinaryValue(Data([1, 2])))) == .string("AQI="))
        #expect(JSONValue(embedding: .list([1, "a", nil])) == .array([.int(1), .string("a"), .null]))
        let nested: [String: [Date]] = ["when": [Date(timeIntervalSince1970: 0)]]
        #expect(nested.rooftopValue == .json(.object(["when": .array([.string("1970-01-01T00:00:00.000Z")])])))
        #expect(JSONValue(embedding: .double(.nan)).firstNonFiniteNumber?.isNaN == true)
        #expect(JSONValue.array([.object(["a": .double(-.infinity)])]).firstNonFiniteNumber == -.infinity)
        #expect(JSONValue(embedding: .list([1.5, 2])).firstNonFiniteNumber == nil)
    }

    @Test("conditions take Swift values from variables, alike the literal forms")
    func conditions() throws {
        let count = 100
        let when = Date(timeIntervalSince1970: 1_000)
        let names = ["Sean", "Ann"]
        let level: Int? = nil
        let author = Pointer(className: "_User", objectId: "u1")
        #expect((Field("score") > count) == (Field("score") > 100))
        #expect((Field("score") >= count) == .comparison(field: "score", op: .greaterOrEqual, value: .int(100)))
        #expect((Field("score") < count) == .comparison(field: "score", op: .less, value: .int(100)))
        #expect((Field("score") <= Int8(3)) == .comparison(field: "score", op: .lessOrEqual, value: .int(3)))
        #expect((Field("when") == when) == .comparison(field: "when", op: .equal, value: .date(Timestamp(when))))
        #expect((Field("when") != when) == .comparison(field: "when", op: .notEqual, value: .date(Timestamp(when))))
        #expect((Field("level") == level) == .comparison(field: "level", op: .equal, value: .null))
        #expect(Field("name").in(names) == Field("name").in(["Sean", "Ann"]))
        #expect(Field("name").notIn(names) == Field("name").notIn(["Sean", "Ann"]))
        #expect(Field("tags").contains("a" as String) == Field("tags").contains(.string("a")))
        #expect(Field("tags").containsAll(names) == Field("tags").containsAll(["Sean", "Ann"]))
        #expect((Field("author") == author) == .comparison(field: "author", op: .equal, value: .pointer(author)))
        // A longer expression mixing literals, variables and Values type-checks as it reads.
        let predicate =
            Field("score") > count && (Field("name") == names[0] || Field("tag").in(["a", "b"]))
            && Field("when") >= when && Field("deleted") != true && Field("misc") == .null
        let object = ObjectSnapshot(
            className: "C", objectId: "o",
            fields: ["score": 101, "name": "Sean", "when": when.rooftopValue, "deleted": false, "misc": nil])
        #expect(QueryEvaluator.matches(object, predicate))
        #expect(!QueryEvaluator.matches(object, predicate && Field("score") < count))
    }
}
