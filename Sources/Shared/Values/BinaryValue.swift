public import Foundation

/// Raw bytes with an optional MIME type: the `bytes` value kind (as in Cloudant Sync: binary data carries
/// its MIME type; without one it is `application/octet-stream`).
public struct BinaryValue: Hashable, Sendable, CustomStringConvertible {
    /// The bytes.
    public var data: Data
    /// The MIME type, e.g. `image/png`; `nil` means `application/octet-stream`.
    public var mimeType: String?

    /// Creates a bytes value.
    public init(_ data: Data, mimeType: String? = nil) {
        self.data = data
        self.mimeType = mimeType
    }

    /// `<N bytes, type>`.
    public var description: String { "<\(data.count) bytes\(mimeType.map { ", \($0)" } ?? "")>" }
}

extension BinaryValue: Codable {
    private enum CodingKeys: String, CodingKey { case base64, mimeType }

    /// Decodes `{"base64": "...", "mimeType": "..."?}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .base64)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .base64, in: container, debugDescription: "invalid base64")
        }
        self.data = data
        self.mimeType = try container.decodeIfPresent(String.self, forKey: .mimeType)
    }

    /// Encodes `{"base64": "...", "mimeType": "..."?}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(data.base64EncodedString(), forKey: .base64)
        try container.encodeIfPresent(mimeType, forKey: .mimeType)
    }
}
