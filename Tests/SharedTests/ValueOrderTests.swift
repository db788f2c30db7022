import Foundation
import PropertyBased
import RooftopShared
import RooftopTestSupport
import Testing

@Suite("The total order over values")
struct ValueOrderTests {
    private func sign(_ value: Int) -> Int { value < 0 ? -1 : (value > 0 ? 1 : 0) }

    private func keyOrder(_ lhs: Value, _ rhs: Value) -> Int {
        let (l, r) = (lhs.sortKey, rhs.sortKey)
        if l == r { return 0 }
        return l.lexicographicallyPrecedes(r) ? -1 : 1
    }

    @Test("antisymmetric: compare(a, b) = -compare(b, a)", .tags(.property))
    func antisymmetric() async {
        await propertyCheck(count: 3000, input: Gen.anyValue, Gen.anyValue) { a, b in
            #expect(sign(Value.compare(a, b)) == -sign(Value.compare(b, a)), "\(a) vs \(b)")
        }
    }

    @Test("reflexive and consistent with identity: a == b implies a ≡ b", .tags(.property))
    func reflexive() async {
        await propertyCheck(count: 2000, input: Gen.anyValue) { a in
            #expect(Value.compare(a, a) == 0, "\(a)")
            #expect(a.sortKey == a.sortKey)
        }
    }

    @Test("transitive over random triples", .tags(.property))
    func transitive() async {
        await propertyCheck(count: 3000, input: Gen.numericValue, Gen.numericValue, Gen.numericValue) { a, b, c in
            checkTransitive(a, b, c)
        }
        await propertyCheck(count: 3000, input: Gen.anyValue, Gen.anyValue, Gen.anyValue) { a, b, c in
            checkTransitive(a, b, c)
        }
    }

    private func checkTransitive(_ a: Value, _ b: Value, _ c: Value) {
        let (ab, bc, ac) = (Value.compare(a, b), Value.compare(b, c), Value.compare(a, c))
        if ab <= 0 && bc <= 0 { #expect(ac <= 0, "\(a) <= \(b) <= \(c) but \(a) > \(c)") }
        if ab == 0 && bc == 0 { #expect(ac == 0, "\(a) ≡ \(b) ≡ \(c) but not \(a) ≡ \(c)") }
        if ab >= 0 && bc >= 0 { #expect(ac >= 0, "\(a) >= \(b) >= \(c) but \(a) < \(c)") }
    }

    @Test("sort keys order exactly like compare", .tags(.property))
    func sortKeysAgree() async {
        await propertyCheck(count: 5000, input: Gen.anyValue, Gen.anyValue) { a, b in
            #expect(keyOrder(a, b) == sign(Value.compare(a, b)), "\(a) vs \(b)")
        }
        await propertyCheck(count: 5000, input: Gen.numericValue, Gen.numericValue) { a, b in
            #expect(keyOrder(a, b) == sign(Value.compare(a, b)), "\(a) vs \(b)")
        }
    }

    @Test("sorting random lists gives the same order through keys and through compare", .tags(.property))
    func sortingAgrees() async {
        await propertyCheck(count: 200, input: Gen.anyValue.array(of: 0...30)) { values in
            let byCompare = values.sorted { Value.compare($0, $1) < 0 }.map(\.sortKey)
            let byKey = values.map(\.sortKey).sorted { $0.lexicographicallyPrecedes($1) }
            #expect(byCompare == byKey)
        }
    }

    @Test("kinds sort in the documented order")
    func kindOrder() throws {
        let ascending: [Value] = [
            .null, false, true, .double(.nan), .double(-.infinity), -1, 0, 2.5, .double(.infinity),
            .decimal(try DecimalNumber("-1")), .decimal(try DecimalNumber("0")),
            .date(Timestamp(millisecondsSinceEpoch: -1)), .date(Timestamp(millisecondsSinceEpoch: 0)),
            .day(try Day("0001-01-01")), .day(try Day("2026-11-22")),
            "", "A", "a", "é", "😀",
            .bytes(BinaryValue(Data())), .bytes(BinaryValue(Data([0]))), .bytes(BinaryValue(Data([0]), mimeType: "a")),
            [], [.null], [1], [1, 2], [2],
            .geoPoint(try GeoPoint(latitude: -1, longitude: 5)), .geoPoint(try GeoPoint(latitude: 0, longitude: -5)),
            .pointer(Pointer(className: "A", objectId: "z")), .pointer(Pointer(className: "B", objectId: "a")),
            .relation(Relation(className: "A", objectIds: [])), .relation(Relation(className: "A", objectIds: ["a"])),
            .json(.int(1)), .json(.null),
        ]
        for (index, lower) in ascending.enumerated() {
            for higher in ascending[(index + 1)...] {
                #expect(Value.compare(lower, higher) < 0, "\(lower) should sort before \(higher)")
                #expect(lower.sortKey.lexicographicallyPrecedes(higher.sortKey), "key of \(lower) before \(higher)")
            }
        }
    }

    @Test("numbers compare exactly across int and double")
    func exactNumbers() {
        let twoTo53 = Int64(1) << 53
        #expect(Value.compare(.int(twoTo53 + 1), .double(Double(twoTo53))) > 0)
        #expect(Value.compare(.int(twoTo53), .double(Double(twoTo53))) == 0)
        #expect(Value.compare(.int(.max), .double(9_223_372_036_854_775_808.0)) < 0)
        #expect(Value.compare(.int(.min), .double(-9_223_372_036_854_775_808.0)) == 0)
        #expect(Value.compare(.int(.min), .double(-9_223_372_036_854_777_856.0)) > 0)
        #expect(Value.compare(.int(1), .double(1.0)) == 0)
        #expect(Value.compare(.int(1), .double(1.5)) < 0)
        #expect(Value.compare(.int(-1), .double(-1.5)) > 0)
        #expect(Value.compare(.double(-0.0), .double(0.0)) == 0)
        #expect(Value.double(-0.0).sortKey == Value.int(0).sortKey)
        #expect(Value.compare(.double(.nan), .double(-.infinity)) < 0)
        #expect(Value.compare(.double(.nan), .double(.nan)) == 0)
        #expect(Value.compare(.double(.leastNonzeroMagnitude), .int(0)) > 0)
        #expect(Value.compare(.double(-.leastNonzeroMagnitude), .int(0)) < 0)
        #expect(Value.int(1).isEquivalent(to: .double(1)))
        #expect(Value.int(1) != Value.double(1))
    }

    @Test("decimals order numerically and keep their digits")
    func decimals() throws {
        let a = Value.decimal(try DecimalNumber("1.50"))
        let b = Value.decimal(try DecimalNumber("1.5"))
        #expect(a != b)
        #expect(a.isEquivalent(to: b))
        #expect(a.sortKey == b.sortKey)
        let ascending = ["-1e10", "-2", "-1.55", "-1.5", "-0.001", "0", "0.0e5", "1e-30", "0.5", "1", "10", "1e10"]
        let values = try ascending.map { Value.decimal(try DecimalNumber($0)) }
        for (lower, higher) in zip(values, values.dropFirst()) {
            #expect(Value.compare(lower, higher) <= 0, "\(lower) <= \(higher)")
            #expect(!higher.sortKey.lexicographicallyPrecedes(lower.sortKey))
        }
        #expect(Value.compare(values[5], values[6]) == 0)
    }

    @Test("strings order by UTF-8 bytes, without normalization")
    func strings() {
        let composed: Value = "\u{E9}"
        let decomposed: Value = "e\u{301}"
        #expect(composed != decomposed)
        #expect(Value.compare(decomposed, composed) < 0)
        #expect(Value.compare("a", "a\0") < 0)
        #expect(Value.compare("a\0", "a\u{1}") < 0)
        #expect(Value.compare("Z", "a") < 0)
    }

    @Test("max and min follow the order")
    func maxMin() {
        #expect(Value.maximum(1, 2.5) == 2.5)
        #expect(Value.minimum("a", 3) == 3)
        #expect(Value.maximum(.null, false) == false)
        #expect(Value.maximum(1, 1.0) == 1)
    }

    @Test("a point's key gives the point back, to the last bit; no other key gives a point")
    func pointFromKey() throws {
        var rng = SeededGenerator(seed: 20_261_203)
        var points = DifferentialValues.points
        for (latitude, longitude) in [(0.0, -0.0), (-0.0, 0.0), (-90, -180), (90, 180), (5e-324, -5e-324), (1e-300, 179.99999999)] {
            points.append(try GeoPoint(latitude: latitude, longitude: longitude))
        }
        for _ in 0..<5000 {
            points.append(
                try GeoPoint(latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng)))
        }
        for point in points {
            let key = Value.geoPoint(point).sortKey
            let read = try #require(GeoPoint(sortKey: key), "\(point)")
            #expect(read.latitude.bitPattern == point.latitude.bitPattern && read.longitude.bitPattern == point.longitude.bitPattern)
            #expect(GeoPoint(sortKey: key.dropLast()) == nil)
            #expect(GeoPoint(sortKey: key + [0]) == nil)
        }
        // Keys of other values, and point-shaped bytes out of range (latitude 91, NaN).
        for _ in 0..<5000 {
            let value = DifferentialValues.value(&rng, depth: 2)
            guard value.kind != .geoPoint else { continue }
            #expect(GeoPoint(sortKey: value.sortKey) == nil, "\(value)")
        }
        var outOfRange = Value.geoPoint(try GeoPoint(latitude: 0, longitude: 0)).sortKey
        var bits = (91.0).bitPattern | (1 << 63)
        for index in (1...8).reversed() {
            outOfRange[index] = UInt8(truncatingIfNeeded: bits)
            bits >>= 8
        }
        #expect(GeoPoint(sortKey: outOfRange) == nil)
        #expect(GeoPoint(sortKey: [UInt8(Value.Kind.geoPoint.rawValue + 1)] + Array(repeating: 0xFF, count: 16)) == nil)
    }
}
