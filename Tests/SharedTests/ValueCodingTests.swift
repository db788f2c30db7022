import Foundation
import PropertyBased
import RooftopShared
import Testing
import RooftopTestSupport

@Suite("Value JSON encoding")
struct ValueCodingTests {
    private func roundTrip(_ value: Value) throws -> Value {
        try JSONDecoder().decode(Value.self, from: JSONEncoder().encode(value))
    }

    private func json(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private func decode(_ text: String) throws -> Value {
        try JSONDecoder().decode(Value.self, from: Data(text.utf8))
    }

    @Test("every value kind round-trips identically", .tags(.property))
    func randomRoundTrip() async throws {
        await propertyCheck(count: 2000, input: Gen.anyValue) { value in
            recordingErrors {
                let decoded = try roundTrip(value)
                #expect(decoded == value, "\(value) came back as \(decoded)")
            }
        }
    }

    @Test("doubles round-trip bit-exactly, edge cases included", arguments: RandomValues.edgeDoubles)
    func edgeDoubles(_ double: Double) throws {
        let decoded = try roundTrip(.double(double))
        guard case .double(let back) = decoded else {
            Issue.record("\(double) decoded as \(decoded)")
            return
        }
        if double.isNaN {
            #expect(back.isNaN)
        } else {
            #expect(back.bitPattern == double.bitPattern)
        }
    }

    @Test("random bit patterns round-trip bit-exactly", .tags(.property))
    func randomBitPatterns() async throws {
        await propertyCheck(count: 2000, input: Gen.uint64()) { bits in
            recordingErrors {
                let double = Double(bitPattern: bits)
                let decoded = try roundTrip(.double(double))
                #expect(decoded.doubleValue.map { $0.bitPattern == bits || ($0.isNaN && double.isNaN) } == true)
            }
        }
    }

    @Test("int, double and bool stay distinct")
    func distinctKinds() throws {
        #expect(try roundTrip(.int(1)) == .int(1))
        #expect(try roundTrip(.double(1)) == .double(1))
        #expect(try roundTrip(.bool(true)) == .bool(true))
        #expect(try roundTrip(.int(0)) != .double(0))
        #expect(try roundTrip(.double(-0.0)).doubleValue?.sign == .minus)
        #expect(try roundTrip(.int(.max)) == .int(.max))
        #expect(try roundTrip(.int(.min)) == .int(.min))
    }

    @Test("the wire form of each kind")
    func goldenForms() throws {
        #expect(try json(.null) == "null")
        #expect(try json(true) == "true")
        #expect(try json(42) == "42")
        #expect(try json(1.5) == #"{"$double":"1.5"}"#)
        #expect(try json(.double(-0.0)) == #"{"$double":"-0.0"}"#)
        #expect(try json(.double(.nan)) == #"{"$double":"NaN"}"#)
        #expect(try json(.double(-.infinity)) == #"{"$double":"-Infinity"}"#)
        #expect(try json(.double(.leastNonzeroMagnitude)) == #"{"$double":"5e-324"}"#)
        #expect(try json("hi") == #""hi""#)
        #expect(try json([1, "a"]) == #"[1,"a"]"#)
        #expect(try json(.date(Timestamp(millisecondsSinceEpoch: 1_763_779_346_123))) == #"{"$date":1763779346123}"#)
        #expect(try json(.bytes(BinaryValue(Data([1, 2, 3]), mimeType: "image/png")))
                == #"{"$bytes":"AQID","mimeType":"image/png"}"#)
        #expect(try json(.decimal(DecimalNumber("1.50"))) == #"{"$decimal":"1.50"}"#)
        #expect(try json(.day(Day("2026-11-22"))) == #"{"$day":"2026-11-22"}"#)
        #expect(try json(.geoPoint(GeoPoint(latitude: 40.5, longitude: -3.25)))
                == #"{"$geoPoint":{"latitude":40.5,"longitude":-3.25}}"#)
        #expect(try json(.json(.object(["a": .array([.int(1), .null])]))) == #"{"$json":{"a":[1,null]}}"#)
        #expect(try json(.pointer(Pointer(className: "Post", objectId: "p1")))
                == #"{"$pointer":{"className":"Post","objectId":"p1"}}"#)
        #expect(try json(.relation(Relation(className: "User", objectIds: ["b", "a", "b"])))
                == #"{"$relation":{"className":"User","objectIds":["a","b"]}}"#)
    }

    @Test("hand-written JSON: bare fractional numbers are doubles, integral ones ints")
    func lenientNumbers() throws {
        #expect(try decode("1.5") == .double(1.5))
        #expect(try decode("7") == .int(7))
        #expect(try decode("-12") == .int(-12))
        #expect(throws: DecodingError.self) { try decode("1e400") }
    }

    @Test(
        "malformed tagged values are rejected",
        arguments: [
            #"{"$double":"abc"}"#, #"{"$double":"inf"}"#, #"{"$double":"0x1p3"}"#, #"{"$date":"yesterday"}"#,
            #"{"$bytes":"%%%"}"#, #"{"$decimal":"1.2.3"}"#, #"{"$day":"2026-02-30"}"#,
            #"{"$geoPoint":{"latitude":91,"longitude":0}}"#, #"{"$unknown":1}"#, #"{"a":1}"#, #"{}"#,
            #"{"$double":"1","$date":1}"#, #"{"$day":"2026-11-22","extra":1}"#,
        ])
    func rejects(_ text: String) {
        #expect(throws: DecodingError.self) { try decode(text) }
    }
}

extension Tag {
    /// Property-based tests over random inputs.
    @Tag static var property: Self
}
