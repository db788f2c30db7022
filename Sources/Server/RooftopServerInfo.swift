/// Facts about this build of the server.
public enum RooftopServerInfo {
    /// The server's version.
    public static let version = "0.1.0"
    /// The REST API version, the first path segment of every API route (`/v1/...`).
    public static let apiVersion = "v1"
}
