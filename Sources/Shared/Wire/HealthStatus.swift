/// The answer to `GET /health` (``API/getHealth``): the server is up, and its version.
///
/// ```json
/// {"status": "ok", "version": "0.1.0"}
/// ```
public struct HealthStatus: Codable, Sendable, Hashable {
    /// Always `ok`.
    public var status: String
    /// The server's version.
    public var version: String

    /// A health answer.
    public init(status: String, version: String) {
        self.status = status
        self.version = version
    }
}
