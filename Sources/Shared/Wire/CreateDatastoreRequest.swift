/// A request to create a shareable datastore; the server chooses its ID and the caller becomes
/// its owner.
///
/// Wire form: `{"title": "Trip plan"}` (`title` optional, at most 1000 bytes).
public struct CreateDatastoreRequest: Hashable, Sendable, Codable {
    /// The longest title, in UTF-8 bytes: 1000.
    public static let maxTitleBytes = 1000

    /// A title for people.
    public var title: String?

    /// Creates a request.
    public init(title: String? = nil) { self.title = title }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for a title that is not a string or a key other than `title`.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "datastore creation")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.title = try container.decodeIfPresent(String.self, forKey: .title)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case title }

    /// Checks the title's length.
    /// - Throws: ``RooftopError/Code/illegalArgument`` for a title over 1000 bytes.
    public func validate() throws(RooftopError) {
        if let title, title.utf8.count > CreateDatastoreRequest.maxTitleBytes {
            throw RooftopError(
                .illegalArgument, "the title is longer than \(CreateDatastoreRequest.maxTitleBytes) bytes",
                field: "title")
        }
    }
}
