/// The total order over all values, shared by sorting, range comparisons and the max/min merge
/// rules, on client and server alike.
///
/// Kinds sort in this order (the Dropbox Datastore API's order — bool < numbers < dates < strings < bytes < lists —
/// with the kinds it does not name placed explicitly):
///
/// 1. `null`
/// 2. `bool`: `false < true`
/// 3. numbers, `int` and `double` together, by exact numeric value (an `Int64` is never rounded
///    to a double to compare): NaN first, then `-infinity`, ..., `+infinity`. `1` and `1.0` are
///    equivalent, as are `-0.0` and `0.0`.
/// 4. `decimal`, by numeric value (`1.50` is equivalent to `1.5`)
/// 5. `date`, chronologically
/// 6. `day`, chronologically
/// 7. `string`, by UTF-8 bytes (that is, by Unicode scalar values; no normalization)
/// 8. `bytes`, by bytes (unsigned, shorter prefix first), then MIME type (none first, then by
///    UTF-8 bytes)
/// 9. `list`, lexicographically by elements in this same order, a prefix first
/// 10. `geoPoint`, by latitude then longitude
/// 11. `pointer`, by class name then object ID (UTF-8 bytes)
/// 12. `relation`, by class name then the sorted object IDs, lexicographically
/// 13. `json`, by the UTF-8 bytes of its canonical text
///
/// The order is total over equivalence classes: for any `a`, `b`, `c`, exactly one of
/// `a < b`, `a ≡ b`, `a > b` holds; it is antisymmetric and transitive. ``Value/sortKey`` encodes
/// it into bytes whose `memcmp` order is the same, which is how the server's SQL uses it.
extension Value {
    /// Compares two values in the total order.
    /// - Returns: a negative number if `lhs` sorts first, zero if they are equivalent, a positive
    ///   number if `rhs` sorts first.
    public static func compare(_ lhs: Value, _ rhs: Value) -> Int {
        switch (lhs, rhs) {
        case (.null, .null): return 0
        case (.bool(let l), .bool(let r)): return l == r ? 0 : (l ? 1 : -1)
        case (.int(let l), .int(let r)): return l < r ? -1 : (l == r ? 0 : 1)
        case (.double(let l), .double(let r)): return NumberComparison.compare(l, r)
        case (.int(let l), .double(let r)): return NumberComparison.compare(int: l, double: r)
        case (.double(let l), .int(let r)): return -NumberComparison.compare(int: r, double: l)
        case (.decimal(let l), .decimal(let r)): return l.compareNumerically(to: r)
        case (.date(let l), .date(let r)): return three(l.millisecondsSinceEpoch, r.millisecondsSinceEpoch)
        case (.day(let l), .day(let r)): return l < r ? -1 : (l == r ? 0 : 1)
        case (.string(let l), .string(let r)): return compareBytes(l.utf8, r.utf8)
        case (.bytes(let l), .bytes(let r)):
            let data = compareBytes(l.data, r.data)
            if data != 0 { return data }
            switch (l.mimeType, r.mimeType) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let lm?, let rm?): return compareBytes(lm.utf8, rm.utf8)
            }
        case (.list(let l), .list(let r)):
            for (a, b) in zip(l, r) {
                let result = compare(a, b)
                if result != 0 { return result }
            }
            return three(l.count, r.count)
        case (.geoPoint(let l), .geoPoint(let r)):
            let latitude = NumberComparison.compare(l.latitude, r.latitude)
            return latitude != 0 ? latitude : NumberComparison.compare(l.longitude, r.longitude)
        case (.pointer(let l), .pointer(let r)):
            let className = compareBytes(l.className.utf8, r.className.utf8)
            return className != 0 ? className : compareBytes(l.objectId.utf8, r.objectId.utf8)
        case (.relation(let l), .relation(let r)):
            let className = compareBytes(l.className.utf8, r.className.utf8)
            if className != 0 { return className }
            for (a, b) in zip(l.objectIds, r.objectIds) {
                let result = compareBytes(a.utf8, b.utf8)
                if result != 0 { return result }
            }
            return three(l.objectIds.count, r.objectIds.count)
        case (.json(let l), .json(let r)):
            return compareBytes(l.canonicalText.utf8, r.canonicalText.utf8)
        default:
            return three(lhs.kind.rawValue, rhs.kind.rawValue)
        }
    }

    /// Whether the two values are equal in the value order (`int(1)` is equivalent to
    /// `double(1.0)`, `decimal("1.50")` to `decimal("1.5")`). This is the `=` of queries.
    public func isEquivalent(to other: Value) -> Bool { Value.compare(self, other) == 0 }

    /// Whether this value sorts before `other` in the value order.
    public func sortsBefore(_ other: Value) -> Bool { Value.compare(self, other) < 0 }

    /// The larger of two values in the value order (`lhs` when they are equivalent).
    public static func maximum(_ lhs: Value, _ rhs: Value) -> Value { compare(lhs, rhs) >= 0 ? lhs : rhs }

    /// The smaller of two values in the value order (`lhs` when they are equivalent).
    public static func minimum(_ lhs: Value, _ rhs: Value) -> Value { compare(lhs, rhs) <= 0 ? lhs : rhs }
}

/// Exact comparisons between 64-bit integers and doubles.
enum NumberComparison {
    /// Compares doubles with NaN first and `-0.0` equivalent to `0.0`.
    static func compare(_ lhs: Double, _ rhs: Double) -> Int {
        if lhs.isNaN { return rhs.isNaN ? 0 : -1 }
        if rhs.isNaN { return 1 }
        return lhs < rhs ? -1 : (lhs == rhs ? 0 : 1)
    }

    /// Compares an integer with a double exactly (no rounding of the integer); NaN sorts first.
    static func compare(int: Int64, double: Double) -> Int {
        if double.isNaN { return 1 }
        // 2^63 is exactly representable; every double at or above it exceeds every Int64.
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = double.rounded(.towardZero)
        // Exact: |whole| < 2^63, or whole == -2^63.
        let wholeInt = Int64(whole)
        if int != wholeInt { return int < wholeInt ? -1 : 1 }
        let fraction = double - whole
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }
}

/// Compares byte sequences lexicographically as unsigned bytes, a prefix first.
func compareBytes<L: Sequence<UInt8>, R: Sequence<UInt8>>(_ lhs: L, _ rhs: R) -> Int {
    var left = lhs.makeIterator()
    var right = rhs.makeIterator()
    while true {
        switch (left.next(), right.next()) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let l?, let r?): if l != r { return l < r ? -1 : 1 }
        }
    }
}

private func three<T: Comparable>(_ lhs: T, _ rhs: T) -> Int { lhs < rhs ? -1 : (lhs == rhs ? 0 : 1) }
