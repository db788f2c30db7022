/// What a server says about itself: its version, the protocol version it speaks, and the limits
/// it enforces (so that clients can check sizes before queueing a change).
///
/// Wire form: `{"version": "0.1.0", "protocolVersion": 1, "limits": {<Limits>}}`.
public struct ServerInfo: Hashable, Sendable, Codable {
    /// The protocol version of this build: 1.
    public static let currentProtocolVersion = 1

    /// The server's software version.
    public var version: String
    /// The wire protocol version.
    public var protocolVersion: Int
    /// The limits the server enforces.
    public var limits: Limits

    /// Creates server information.
    public init(version: String, protocolVersion: Int = ServerInfo.currentProtocolVersion, limits: Limits = Limits()) {
        self.version = version
        self.protocolVersion = protocolVersion
        self.limits = limits
    }
}
