/// Client-generated, globally unique object IDs.
///
/// Apps create objects offline, so IDs cannot come from the server. An ID is 26 characters of
/// Crockford base 32 (lowercase): a 48-bit millisecond timestamp followed by 80 random bits.
/// IDs made later sort later, which keeps database indexes compact; 80 random bits make a
/// collision between two IDs of the same millisecond about as likely as guessing a 24-digit
/// number. Every generated ID is a valid record ID (as in the Dropbox Datastore API).
public enum ObjectID {
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// A new ID for the current time from the system's random number generator.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return generate(at: .now, using: &generator)
    }

    /// A new ID for the given time and random source (inject both in tests).
    /// - Parameters:
    ///   - time: The creation time; its low 48 bits of milliseconds are used.
    ///   - generator: The source of the 80 random bits.
    public static func generate<R: RandomNumberGenerator>(at time: Timestamp, using generator: inout R) -> String {
        let milliseconds = UInt64(bitPattern: time.millisecondsSinceEpoch) & 0xFFFF_FFFF_FFFF
        let high = generator.next() & 0xFFFF  // 16 random bits
        let low = generator.next()  // 64 random bits
        // 128 bits: 48 time | 16 random | 64 random, written as 26 base-32 digits (130 bits).
        var upper = (milliseconds << 16) | high
        var lower = low
        var digits = [UInt8](repeating: 0, count: 26)
        for index in stride(from: 25, through: 0, by: -1) {
            digits[index] = alphabet[Int(lower & 31)]
            lower = (lower >> 5) | ((upper & 31) << 59)
            upper >>= 5
        }
        return String(decoding: digits, as: UTF8.self)
    }
}
