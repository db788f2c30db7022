import PropertyBased
import RooftopShared
import Testing

@Suite("IDs and their limits")
struct IdentityTests {
    @Test(
        "valid table, record and field IDs",
        arguments: ["a", "GameScore", "A-Z.a_z+0/9=", String(repeating: "x", count: 64), ":reserved", "_User"])
    func valid(_ id: String) {
        #expect(Identifier.isValid(id))
    }

    @Test(
        "invalid IDs",
        arguments: ["", ":", String(repeating: "x", count: 65), "a b", "a\0", "é", "a;DROP", "a'b", "a\"b", "::x", "a:b", "😀"])
    func invalid(_ id: String) {
        #expect(!Identifier.isValid(id))
        #expect(throws: RooftopError.self) { try Identifier.validate(id, as: .field) }
    }

    @Test("64 characters pass, 65 fail")
    func lengthLimit() throws {
        try Identifier.validate(String(repeating: "a", count: 64), as: .className)
        let error = #expect(throws: RooftopError.self) {
            try Identifier.validate(String(repeating: "a", count: 65), as: .className)
        }
        #expect(error?.code == .illegalArgument)
    }

    @Test("reserved IDs are valid but refused unless allowed")
    func reserved() throws {
        #expect(Identifier.isReserved(":x"))
        let error = #expect(throws: RooftopError.self) { try Identifier.validate(":x", as: .objectId) }
        #expect(error?.message.contains("reserved") == true)
        try Identifier.validate(":x", as: .objectId, allowReserved: true)
    }

    @Test(
        "private datastore IDs",
        arguments: ["default", "settings", "a", "a.b", "x-y_z", "0", String(repeating: "a", count: 64)])
    func privateIDs(_ text: String) throws {
        #expect(try DatastoreID(text).kind == .private)
    }

    @Test(
        "shareable datastore IDs",
        arguments: [".a", ".Ab-_9", "." + String(repeating: "Z", count: 63)])
    func shareableIDs(_ text: String) throws {
        let id = try DatastoreID(text)
        #expect(id.kind == .shareable)
        #expect(id.isShareable)
    }

    @Test(
        "invalid datastore IDs",
        arguments: [
            "", ".", "a.", "Default", "a b", String(repeating: "a", count: 65), "." + String(repeating: "a", count: 64),
            ".a.b", ".a+b", "app", ":other",
        ])
    func invalidDatastoreIDs(_ text: String) {
        if text == "app" {
            #expect((try? DatastoreID(text))?.kind == .private)  // a valid private ID, not the app datastore
        } else {
            #expect(throws: RooftopError.self) { try DatastoreID(text) }
        }
    }

    @Test("the app datastore")
    func appDatastore() throws {
        #expect(try DatastoreID(":app") == .app)
        #expect(DatastoreID.app.kind == .app)
    }

    @Test("generated shareable IDs are valid and distinct")
    func generatedShareable() throws {
        var seen = Set<DatastoreID>()
        for _ in 0..<1000 {
            let id = DatastoreID.generateShareable()
            #expect(try DatastoreID(id.rawValue) == id)
            #expect(id.kind == .shareable)
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    @Test("object IDs are valid record IDs, unique, and sort by creation time")
    func objectIDs() {
        var ids = Set<String>()
        for _ in 0..<10_000 {
            let id = ObjectID.generate()
            #expect(id.utf8.count == 26)
            #expect(Identifier.isValid(id))
            ids.insert(id)
        }
        #expect(ids.count == 10_000)
        var generator = SystemRandomNumberGenerator()
        let earlier = ObjectID.generate(at: Timestamp(millisecondsSinceEpoch: 1_000), using: &generator)
        let later = ObjectID.generate(at: Timestamp(millisecondsSinceEpoch: 1_001), using: &generator)
        #expect(earlier < later)
    }

    @Test("object IDs from a seeded generator are deterministic")
    func seededObjectIDs() {
        struct Counter: RandomNumberGenerator {
            var state: UInt64 = 0
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                return state
            }
        }
        var a = Counter()
        var b = Counter()
        let time = Timestamp(millisecondsSinceEpoch: 1_763_779_346_123)
        #expect(ObjectID.generate(at: time, using: &a) == ObjectID.generate(at: time, using: &b))
    }
}

@Suite("Days, timestamps, decimals, geo points")
struct ScalarKindTests {
    @Test("days validate the calendar")
    func days() throws {
        #expect(try Day("2024-02-29").description == "2024-02-29")
        #expect(throws: RooftopError.self) { try Day("2023-02-29") }
        #expect(throws: RooftopError.self) { try Day("1900-02-29") }
        #expect(try Day("2000-02-29").day == 29)
        #expect(throws: RooftopError.self) { try Day("0000-01-01") }
        #expect(throws: RooftopError.self) { try Day("2026-1-01") }
        #expect(throws: RooftopError.self) { try Day("2026-13-01") }
        #expect(try Day("1970-01-01").daysSinceEpoch == 0)
        #expect(try Day("1969-12-31").daysSinceEpoch == -1)
    }

    @Test("day <-> days since epoch round-trips", .tags(.property))
    func dayRoundTrip() async {
        await propertyCheck(count: 1000, input: Gen.int64(in: -719_162...2_932_896)) { days in
            #expect(Day(daysSinceEpoch: days).daysSinceEpoch == days)
        }
    }

    @Test("timestamps print as ISO 8601 UTC")
    func timestamps() {
        #expect(Timestamp(millisecondsSinceEpoch: 0).description == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSinceEpoch: 1_763_779_346_123).description == "2025-11-22T02:42:26.123Z")
        #expect(Timestamp(millisecondsSinceEpoch: -1).description == "1969-12-31T23:59:59.999Z")
    }

    @Test("decimals accept numbers and reject the rest")
    func decimalSyntax() {
        for text in ["0", "-0", "+1", "1.", ".5", "1.50", "1e5", "1E-5", "-123.456e+7", "1e999999999", "-1e-999999999",
                     String(repeating: "9", count: 900) + "e999999999"] {
            #expect((try? DecimalNumber(text)) != nil, "\(text)")
        }
        for text in ["", "-", ".", "e5", "1e", "1e+", "1.2.3", "1,5", " 1", "NaN", "Infinity", "0x10", "1e1234567890",
                     "1e99999999999999999999", "1e-99999999999999999999", "-1.5E+0000000001",
                     "1e" + String(repeating: "9", count: 990)] {
            #expect((try? DecimalNumber(text)) == nil, "\(text)")
        }
    }

    @Test("geo points validate ranges and measure distance")
    func geoPoints() throws {
        #expect(throws: RooftopError.self) { try GeoPoint(latitude: 90.0001, longitude: 0) }
        #expect(throws: RooftopError.self) { try GeoPoint(latitude: 0, longitude: -180.5) }
        #expect(throws: RooftopError.self) { try GeoPoint(latitude: .nan, longitude: 0) }
        let madrid = try GeoPoint(latitude: 40.4168, longitude: -3.7038)
        let paris = try GeoPoint(latitude: 48.8566, longitude: 2.3522)
        let distance = madrid.distanceMeters(to: paris)
        #expect(abs(distance - 1_053_000) < 5_000)
        #expect(madrid.distanceMeters(to: madrid) == 0)
        #expect(try GeoPoint(latitude: -0.0, longitude: -0.0) == GeoPoint(latitude: 0, longitude: 0))
    }

    @Test("JSON values compare as JSON and print canonically")
    func jsonValues() {
        #expect(JSONValue.int(2) == .double(2))
        #expect(JSONValue.object(["b": .int(1), "a": .string("x")]).canonicalText == #"{"a":"x","b":1}"#)
        #expect(JSONValue.double(2).canonicalText == "2")
        #expect(JSONValue.double(0.5).canonicalText == "0.5")
        #expect(JSONValue.string("a\"\n\u{1}").canonicalText == #""a\"\n\u0001""#)
        #expect(JSONValue.array([.array([.null])]).depth == 2)
    }
}

@Suite("Saturating durations")
struct SaturatingDurationTests {
    @Test("durations convert to milliseconds without trapping")
    func milliseconds() {
        #expect(Duration.seconds(1.5).saturatingMilliseconds == 1500)
        #expect(Duration.milliseconds(-7).saturatingMilliseconds == -7)
        #expect(Duration.seconds(Int64.max).saturatingMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).saturatingMilliseconds == .min)
        #expect(Duration.clampedMilliseconds(1e300) == .milliseconds(Int64.max))
        #expect(Duration.clampedMilliseconds(-.infinity) == .milliseconds(Int64.min))
        #expect(Duration.clampedMilliseconds(.nan) == .zero)
        #expect(Int64.max.addingSaturating(1) == .max)
        #expect(Int64.min.addingSaturating(-1) == .min)
        #expect(Int64(40).addingSaturating(2) == 42)
    }
}
