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
}
