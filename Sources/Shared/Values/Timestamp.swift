public import Foundation

/// A point in time with millisecond precision, in UTC: the `date` value kind.
///
/// Stored as whole milliseconds since 1970-01-01T00:00:00Z so that it survives every round trip
/// exactly (a `Foundation.Date` is a `Double` of seconds and would not).
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch (negative before 1970).
    public var millisecondsSinceEpoch: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// Creates a timestamp from a `Date`, rounding down to the millisecond.
    /// Dates outside the representable range are clamped.
    public init(_ date: Date) {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        if milliseconds >= 9.2e18 {
            self.millisecondsSinceEpoch = .max
        } else if milliseconds <= -9.2e18 || milliseconds.isNaN {
            self.millisecondsSinceEpoch = milliseconds.isNaN ? 0 : .min
        } else {
            self.millisecondsSinceEpoch = Int64(milliseconds)
        }
    }

    /// The current time, from the system clock.
    public static var now: Timestamp { Timestamp(Date()) }

    /// This timestamp as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSinceEpoch) / 1000) }

    /// Orders timestamps chronologically.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    /// ISO 8601 in UTC with milliseconds, e.g. `2026-11-22T02:42:26.123Z`.
    public var description: String {
        let millis = millisecondsSinceEpoch
        let (days, dayMillis) = floorDivide(millis, 86_400_000)
        let day = Day(daysSinceEpoch: days)
        let hours = dayMillis / 3_600_000
        let minutes = dayMillis / 60_000 % 60
        let seconds = dayMillis / 1000 % 60
        let fraction = dayMillis % 1000
        return "\(day)T\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2)).\(pad(fraction, 3))Z"
    }

    /// Decodes from a JSON integer of milliseconds.
    public init(from decoder: any Decoder) throws {
        self.millisecondsSinceEpoch = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes as a JSON integer of milliseconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(millisecondsSinceEpoch)
    }
}

/// Floor division and its non-negative remainder.
func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
    let quotient = value / divisor
    let remainder = value % divisor
    return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
}

/// Decimal digits of `value`, left-padded with zeros to `width`.
func pad<T: BinaryInteger>(_ value: T, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}
