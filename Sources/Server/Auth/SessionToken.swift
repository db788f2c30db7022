import Crypto
import Foundation

/// Session tokens: 256 random bits, sent to the client once and stored only as a SHA-256 hash,
/// so a leaked database does not leak usable sessions.
enum SessionToken {
    /// A new token: 32 random bytes in unpadded base64url, prefixed `r:`.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<4).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
        return "r:" + base64URL(bytes)
    }

    /// The stored form of a token: hex SHA-256.
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
