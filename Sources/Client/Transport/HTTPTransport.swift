import Foundation
import RooftopShared

/// A request to the Rooftop server, independent of the HTTP library.
struct TransportRequest: Sendable {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`.
    var method: String
    /// The path and query, e.g. `/v1/push`.
    var path: String
    /// Header fields.
    var headers: [(String, String)] = []
    /// The JSON body.
    var body: Data?
}

/// An answer from the server.
struct TransportResponse: Sendable {
    /// The HTTP status.
    var status: Int
    /// The body.
    var body: Data
}

/// Sends requests to the server. The client talks to the network only through this, so the
/// offline queue and the sync state machine are tested with a fake transport.
///
/// Failures are `RooftopError`s: `noConnection` (the server could not be reached), `timeout`,
/// `tls` (certificate or handshake), `network` (anything else on the way); HTTP error answers are
/// not failures here — ``RemoteAPI`` turns them into the server's error codes.
protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async throws(RooftopError) -> TransportResponse
    func shutdown() async
}
