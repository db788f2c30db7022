import Foundation

/// Unpadded base64url (RFC 4648 §5), the form of session tokens and checkpoints: `+` and `/`
/// become `-` and `_`, and the `=` padding is left out.
///
/// ```swift
/// let text = Base64URL.encode([0xFB, 0xFF])   // "-_8"
/// let bytes = Base64URL.decode(text)          // Data([0xFB, 0xFF])
/// ```
enum Base64URL {
    /// The unpadded base64url text of `bytes`.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of unpadded (or padded) base64url text; `nil` when it is not base64url.
    static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
