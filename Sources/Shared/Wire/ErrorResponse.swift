/// The body of every error response: `{"error": {"code": "disallowed", "message": "..."}}`.
public struct ErrorResponse: Equatable, Sendable, Codable {
    /// The error.
    public var error: RooftopError

    /// Wraps an error.
    public init(error: RooftopError) { self.error = error }
}
