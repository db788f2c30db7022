import Crypto
import Foundation

/// Session tokens: 256 random bits, sent to the client once and stored only as a SHA-256 hash,
/// so a leaked database does not leak usable sessions.
enum SessionToken {
    /// A new token: 32 random bytes in unpadded base64url, prefixed `r:`.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<4).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
        return "r:" + Base64URL.encode(bytes)
    }

    /// The stored form of a token: hex SHA-256.
    static func hash(_ token: String) -> String {
        // Two digits per byte written into one buffer: a push names an origin (two hashes) per
        // mutation, and a string per byte joined was a twentieth of a push's server time.
        let digest = SHA256.hash(data: Array(token.utf8))
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 2 * SHA256.byteCount) { buffer in
            var at = 0
            digest.withUnsafeBytes { bytes in
                for byte in bytes {
                    buffer[at] = digits.utf8Start[Int(byte >> 4)]
                    buffer[at + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    at += 2
                }
            }
            return at
        }
    }
}
