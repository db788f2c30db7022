/// Facts about this build of the client library.
public enum RooftopClientInfo {
    /// The client library's version.
    public static let version = "0.1.0"
    /// The REST API version the client speaks.
    public static let apiVersion = "v1"
}
