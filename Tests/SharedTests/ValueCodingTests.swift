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

    @Test("an integral double beyond 2^53 inside a JSON value round-trips to an equal number")
    func largeIntegralDoubleInJSON() throws {
        // Found by the property above: written as -8.172749141926021e+16, it read back as the
        // integer -81727491419260210, not the double's exact value -81727491419260208.
        for double in [-8.172749141926021e+16, 9.007199254740993e15, 9.2e18, -9.223372036854775808e18, 1e300] {
            let value = Value.json(.array([.double(double)]))
            #expect(try roundTrip(value) == value, "\(double)")
        }
    }

    @Test("doubles round-trip bit-exactly, edge cases included", arguments: RandomValues.edges.doubles)
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

    /// The message of the decoding error `text` raises, or `nil` when it decodes.
    private func refusal(_ text: String) -> String? {
        do {
            _ = try decode(text)
            return nil
        } catch let DecodingError.dataCorrupted(context) {
            return context.debugDescription
        } catch {
            return "\(error)"
        }
    }

    @Test(
        "a bare integral number beyond 64 bits is refused, not read as a double",
        arguments: [
            "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890", "1e19", "-1e30",
            "9223372036854775807.5",
        ])
    func integersBeyond64Bits(_ text: String) {
        let message = refusal(text)
        #expect(message?.contains("does not fit in 64 bits") == true, "\(text): \(message ?? "decoded")")
    }

    @Test("the 64-bit integer bounds and large non-integral numbers still decode")
    func integerBounds() throws {
        #expect(try decode("9223372036854775807") == .int(.max))
        #expect(try decode("-9223372036854775808") == .int(.min))
        // Every double of that size is integral: a bare one is an int that does not fit, and
        // must be written as a $double.
        #expect(refusal("1.5e300")?.contains("does not fit in 64 bits") == true)
        #expect(try decode(#"{"$double":"1.5e300"}"#) == .double(1.5e300))
        #expect(try decode("[1, 2.5]") == .list([.int(1), .double(2.5)]))
    }

    @Test(
        "numbers beyond a double's range are refused, bare or in $double; the tokens still decode",
        arguments: ["1e400", "-1e400", #"{"$double":"1e400"}"#, #"{"$double":"-1e400"}"#, #"{"$double":"1e999999"}"#])
    func overflowingDoubles(_ text: String) {
        let message = refusal(text)
        #expect(message?.contains("range") == true, "\(text): \(message ?? "decoded")")
    }

    @Test("Infinity, -Infinity and NaN tokens are the encodings of those doubles")
    func nonFiniteTokens() throws {
        #expect(try decode(#"{"$double":"Infinity"}"#) == .double(.infinity))
        #expect(try decode(#"{"$double":"-Infinity"}"#) == .double(-.infinity))
        guard case .double(let nan) = try decode(#"{"$double":"NaN"}"#) else {
            Issue.record("NaN did not decode as a double")
            return
        }
        #expect(nan.isNaN)
        #expect(Value.parseDouble("1e400") == nil)
        #expect(Value.parseDouble("1e308") == 1e308)
    }

    @Test("in $json, numbers follow JSON: big integers become the nearest double, overflow is refused")
    func jsonNumbers() throws {
        #expect(try decode(#"{"$json":{"n":9223372036854775807}}"#) == .json(.object(["n": .int(.max)])))
        #expect(
            try decode(#"{"$json":[123456789012345678901234567890]}"#)
                == .json(.array([.double(123456789012345678901234567890.0)])))
        #expect(try decode(#"{"$json":1e300}"#) == .json(.double(1e300)))
        #expect(refusal(#"{"$json":{"n":1e400}}"#)?.contains("range") == true)
        // What a JSON value encodes, it decodes: a large double survives the round trip.
        #expect(try roundTrip(.json(.array([.double(1e300), .double(-2e19)]))) == .json(.array([.double(1e300), .double(-2e19)])))
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
