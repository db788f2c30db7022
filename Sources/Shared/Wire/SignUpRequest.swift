/// A request to create an account and sign in.
///
/// Wire form: `{"username": "ada", "password": "correct horse", "email": "ada@example.com"}`
/// (`email` optional).
///
/// ```swift
/// let request = SignUpRequest(username: "ada", password: "correct horse battery")
/// try request.validate()
/// ```
public struct SignUpRequest: Hashable, Sendable, Codable {
    /// The shortest accepted password, in characters: 8.
    public static let minPasswordLength = 8
    /// The longest accepted password, in UTF-8 bytes: 1024 (a bound on hashing work; servers
    /// that hash with bcrypt must pre-hash, since bcrypt reads only 72 bytes).
    public static let maxPasswordBytes = 1024
    /// The longest accepted user name, in UTF-8 bytes: 128.
    public static let maxUsernameBytes = 128

    /// The user name: 1-128 bytes (also in NFC, the form it is stored in), no control characters,
    /// no leading or trailing white space, some visible character. Names are compared by their
    /// keys (``usernameKey(_:)``): one that differs from a taken name only in case, Unicode form,
    /// width or invisible characters is taken.
    public var username: String
    /// The password: at least 8 characters, at most 1024 bytes.
    public var password: String
    /// An e-mail address, optional.
    public var email: String?

    /// Creates a sign-up request.
    public init(username: String, password: String, email: String? = nil) {
        self.username = username
        self.password = password
        self.email = email
    }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for a missing or mistyped member or an unknown key.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "sign-up request")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.username = try container.decode(String.self, forKey: .username)
        self.password = try container.decode(String.self, forKey: .password)
        self.email = try container.decodeIfPresent(String.self, forKey: .email)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case username, password, email }

    /// Checks the user name, password and e-mail address.
    /// - Throws: ``RooftopError/Code/illegalArgument`` naming the field (`username`, `password`,
    ///   `email`) that breaks its rule. The message never contains the password.
    public func validate() throws(RooftopError) {
        try SignUpRequest.validateUsername(username)
        // Only after the length check: normalizing and folding take time in proportion to it.
        guard SignUpRequest.normalizedUsername(username).utf8.count <= SignUpRequest.maxUsernameBytes else {
            throw RooftopError(
                .illegalArgument,
                "the user name is longer than \(SignUpRequest.maxUsernameBytes) bytes in Unicode NFC, the form it is stored in",
                field: "username")
        }
        guard !SignUpRequest.usernameKey(username).isEmpty else {
            throw RooftopError(.illegalArgument, "the user name has no visible character", field: "username")
        }
        guard password.count >= SignUpRequest.minPasswordLength else {
            throw RooftopError(
                .illegalArgument, "the password needs at least \(SignUpRequest.minPasswordLength) characters",
                field: "password")
        }
        guard password.utf8.count <= SignUpRequest.maxPasswordBytes else {
            throw RooftopError(
                .illegalArgument, "the password is longer than \(SignUpRequest.maxPasswordBytes) bytes",
                field: "password")
        }
        if let email {
            let parts = email.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, email.utf8.count <= 254,
                !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 })
            else {
                throw RooftopError(.illegalArgument, "'\(email.prefix(80))' is not an e-mail address", field: "email")
            }
        }
    }

    /// Checks a user name (also used when logging in).
    /// - Throws: ``RooftopError/Code/illegalArgument`` for an empty or too long name, control
    ///   characters, or leading or trailing white space.
    public static func validateUsername(_ username: String) throws(RooftopError) {
        let scalars = username.unicodeScalars
        guard let first = scalars.first, let last = scalars.last else {
            throw RooftopError(.illegalArgument, "the user name is empty", field: "username")
        }
        guard username.utf8.count <= maxUsernameBytes else {
            throw RooftopError(
                .illegalArgument, "the user name is longer than \(maxUsernameBytes) bytes", field: "username")
        }
        guard !first.properties.isWhitespace, !last.properties.isWhitespace,
            !scalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw RooftopError(
                .illegalArgument, "the user name has control characters or leading or trailing spaces",
                field: "username")
        }
    }
}
