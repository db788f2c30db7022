import Foundation
import HTTPTypes
import HummingbirdWSClient
import NIOCore
import NIOSSL
import RooftopShared

/// Where and how a ``LiveConnection`` opens its WebSocket: the `wss://…/v1/live` URL derived from
/// the server URL, the TLS configuration of the client's ``TrustPolicy``, the SNI name, and the
/// upgrade headers.
///
/// Host names are verified as usual. An IP address cannot be sent as a TLS server name (SNI),
/// and the WebSocket client always sends one, so for IP hosts:
/// - a loopback address (`127.x.x.x`) is verified as `localhost` (the name the development
///   certificate carries; the connection cannot leave the machine);
/// - another IPv4 address is accepted only with a narrow trust policy (a private CA or a pinned
///   certificate, which identify the deployment), without hostname verification;
///   with ``TrustPolicy/systemRoots`` it is refused, since any publicly trusted certificate
///   would then pass;
/// - IPv6 literals are not supported by the WebSocket client: use a host name.
struct LiveSocketTarget: Sendable {
    /// The WebSocket URL, e.g. `wss://rooftop.example.com/v1/live`.
    var url: String
    /// The TLS configuration, `nil` for a plain-HTTP server (`ws://`).
    var tls: TLSConfiguration?
    /// The WebSocket client's configuration: upgrade headers, SNI name, frame size, timeouts.
    var configuration: WebSocketClientConfiguration

    /// The largest message accepted from the server (its messages are a few hundred bytes).
    static let maxMessageBytes = 1 << 16

    /// The target for a server.
    /// - Parameters:
    ///   - serverURL: The server's base URL (`https://host:port`, optionally with a path prefix).
    ///   - appId: Sent as `X-Rooftop-Application-Id` on the upgrade request.
    ///   - trust: Which certificates to trust.
    /// - Throws: `illegalArgument` for a URL that is not `http(s)` with a host, an IPv6 literal
    ///   host, or a trusted PEM without a certificate; `tls` for a non-loopback IP address with
    ///   ``TrustPolicy/systemRoots``.
    init(serverURL: URL, appId: String, trust: TrustPolicy) throws(RooftopError) {
        guard let components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = components.host, !host.isEmpty
        else {
            throw RooftopError(.illegalArgument, "the server URL must be http(s)://host[:port]: \(serverURL)")
        }
        if host.contains(":") {
            throw RooftopError(
                .illegalArgument, "the live connection cannot reach an IPv6 address literal (\(host)); use a host name")
        }
        var base = components
        base.scheme = scheme == "https" ? "wss" : "ws"
        base.query = nil
        base.fragment = nil
        var path = base.path
        while path.hasSuffix("/") { path.removeLast() }
        base.path = path + API.live.operation.path
        guard let url = base.string else {
            throw RooftopError(.illegalArgument, "the server URL cannot be turned into a WebSocket URL: \(serverURL)")
        }
        self.url = url

        var headers = HTTPFields()
        if let name = HTTPField.Name("X-Rooftop-Application-Id") { headers[name] = appId }
        var configuration = WebSocketClientConfiguration(
            maxFrameSize: LiveSocketTarget.maxMessageBytes, additionalHeaders: headers,
            // After sending a close frame the client waits this long for the server to end the
            // connection; the default 15 s would hold close() that long against a stuck server.
            closeTimeout: .seconds(1),
            // Pings detect a half-open connection (e.g. after a network change) that would
            // otherwise look connected forever.
            autoPing: .enabled(timePeriod: .seconds(30)))
        if scheme == "https" {
            var tls = try trust.tlsConfiguration()
            // After the close handshake the TLS layer waits for the server's close_notify; the
            // connection is finished by then, so don't let close() wait the default 5 s.
            tls.shutdownTimeout = .milliseconds(100)
            if LiveSocketTarget.isIPv4(host) {
                if LiveSocketTarget.isLoopback(host) {
                    configuration.sniHostname = "localhost"
                } else if trust.isNarrow {
                    configuration.sniHostname = "localhost"
                    tls.certificateVerification = .noHostnameVerification
                } else {
                    throw RooftopError(
                        .tls,
                        "cannot verify the server's certificate for the IP address \(host) with the system roots; use its host name, or trust its CA"
                    )
                }
            }
            self.tls = tls
        } else {
            self.tls = nil
        }
        self.configuration = configuration
    }

    /// Whether `host` is a dotted-quad IPv4 address.
    static func isIPv4(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in UInt8(part).map { _ in !part.isEmpty } ?? false }
    }

    /// Whether `host` is an IPv4 loopback address (`127.0.0.0/8`).
    static func isLoopback(_ host: String) -> Bool {
        isIPv4(host) && host.hasPrefix("127.")
    }
}
