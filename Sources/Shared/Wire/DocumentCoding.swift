import Foundation

/// JSON coding of stored documents (object bodies, operations, settings, results), the same on the
/// server's storage and the client's local store: keys sorted, slashes unescaped, so that equal
/// values give equal text.
///
/// ```swift
/// let text = try DocumentCoding.encode(snapshot)
/// let back = try DocumentCoding.decode(ObjectSnapshot.self, from: text)
/// ```
public enum DocumentCoding {
    /// The document as text.
    /// - Throws: What `JSONEncoder` throws (a value that cannot be encoded).
    public static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The value a document holds.
    /// - Throws: What `JSONDecoder` throws (text that is not such a document).
    public static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
