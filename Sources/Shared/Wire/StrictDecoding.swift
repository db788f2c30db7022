/// Refuses JSON objects with keys outside `allowed`: in wire objects an unknown key is an error,
/// not silently ignored, so that a typo (`"basVersion"`, `"limt"`) cannot turn a merge into a
/// blind write or a page into a default one.
///
/// - Parameters:
///   - decoder: The decoder positioned on the object.
///   - allowed: The keys the object may have.
///   - what: The object's name for people, used in the message (`"pull request"`).
/// - Throws: `DecodingError.dataCorrupted` naming the first unknown key (in sorted order), and
///   `DecodingError.typeMismatch` when the value is not an object.
public func rejectUnknownKeys(_ decoder: any Decoder, allowed: [String], in what: String) throws {
    let container = try decoder.container(keyedBy: AnyCodingKey.self)
    if let extra = container.allKeys.map(\.stringValue).filter({ !allowed.contains($0) }).sorted().first {
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath,
                debugDescription: "unexpected key '\(extra)' in a \(what); expected \(allowed.joined(separator: ", "))"
            ))
    }
}
