/// Refuses JSON objects with keys outside `allowed`: in wire objects an unknown key is an error,
/// not silently ignored, so that a typo (`"basVersion"`, `"limt"`) cannot turn a merge into a
/// blind write or a page into a default one.
func rejectUnknownKeys(_ decoder: any Decoder, allowed: [String], in what: String) throws {
    let container = try decoder.container(keyedBy: AnyCodingKey.self)
    if let extra = container.allKeys.map(\.stringValue).filter({ !allowed.contains($0) }).sorted().first {
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath,
                debugDescription: "unexpected key '\(extra)' in a \(what); expected \(allowed.joined(separator: ", "))"
            ))
    }
}
