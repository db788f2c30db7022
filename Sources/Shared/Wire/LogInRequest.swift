/// A request to sign in with a user name and password.
///
/// Wire form: `{"username": "ada", "password": "correct horse"}`.
public struct LogInRequest: Hashable, Sendable, Codable {
    /// The user name.
    public var username: String
    /// The password.
    public var password: String

    /// Creates a log-in request.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for a missing or mistyped member or an unknown key.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "log-in request")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.username = try container.decode(String.self, forKey: .username)
        self.password = try container.decode(String.self, forKey: .password)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case username, password }
}
