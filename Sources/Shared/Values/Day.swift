/// A calendar date without a time or time zone (`yyyy-mm-dd`): the `day` value kind.
///
/// Years run from 1 to 9999 in the proleptic Gregorian calendar.
public struct Day: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The year, 1...9999.
    public let year: Int
    /// The month, 1...12.
    public let month: Int
    /// The day of the month, 1...28/29/30/31.
    public let day: Int

    /// Creates a day, validating it.
    /// - Throws: ``RooftopError/Code/illegalArgument`` when the date does not exist.
    public init(year: Int, month: Int, day: Int) throws(RooftopError) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...Day.daysIn(month: month, year: year)).contains(day)
        else {
            throw RooftopError(
                .illegalArgument, "\(year)-\(month)-\(day) is not a valid day (years 1-9999)")
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `yyyy-mm-dd` (exactly four, two and two digits).
    /// - Throws: ``RooftopError/Code/illegalArgument`` when the text is not a valid day.
    public init(_ text: String) throws(RooftopError) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            var result = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                result = result * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return result
        }
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10)
        else {
            throw RooftopError(.illegalArgument, "'\(text)' is not a day in the form yyyy-mm-dd")
        }
        try self.init(year: year, month: month, day: day)
    }

    /// The day `days` days after 1970-01-01 (negative before). Clamped to years 1...9999.
    public init(daysSinceEpoch days: Int64) {
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let dayOfYear = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yoe + era * 400) + (month <= 2 ? 1 : 0)
        if year < 1 {
            (self.year, self.month, self.day) = (1, 1, 1)
        } else if year > 9999 {
            (self.year, self.month, self.day) = (9999, 12, 31)
        } else {
            (self.year, self.month, self.day) = (year, month, day)
        }
    }

    /// Days since 1970-01-01 (negative before).
    public var daysSinceEpoch: Int64 {
        // Howard Hinnant's days_from_civil.
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Orders days chronologically.
    public static func < (lhs: Day, rhs: Day) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// `yyyy-mm-dd`.
    public var description: String { "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))" }

    /// Decodes from `"yyyy-mm-dd"`.
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes as `"yyyy-mm-dd"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
