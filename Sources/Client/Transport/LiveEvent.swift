import Foundation
import RooftopShared

/// What happens on a ``LiveConnection``, in order, on its ``LiveConnection/events`` stream.
///
/// A typical session: `.connected`, `.subscribed([.default])`, then `.changed(.default, 17)`
/// whenever a change the user may read is committed there (the client pulls to get it);
/// `.disconnected(error)` when the socket drops or an attempt fails, followed by new attempts
/// after the retry policy's backoff, each ending in `.connected` or another `.disconnected`.
enum LiveEvent: Sendable, Equatable {
    /// The socket is open (the WebSocket upgrade succeeded); subscriptions are being sent.
    case connected
    /// The socket closed, or an attempt to open it failed. `nil` when the client closed it on
    /// purpose (``LiveConnection/close()`` or a session change); otherwise why: `noConnection`,
    /// `timeout`, `tls`, `network` (dropped, or closed by the server), `auth` (upgrade refused:
    /// wrong application ID).
    case disconnected(RooftopError?)
    /// The server confirmed these subscriptions (the datastores it accepted).
    case subscribed([DatastoreID])
    /// A change was committed in the datastore as its change number `sequence`.
    case changed(DatastoreID, sequence: Int64)
    /// The server reported an error, about one datastore (a refused or ended subscription) or
    /// about the connection (`auth`: the session token is invalid, expired or was revoked; the
    /// connection then continues anonymously without subscriptions). `response` when a message
    /// from the server could not be read.
    case error(RooftopError, DatastoreID?)
}

extension LiveEvent {
    /// The event a text message from the server stands for; an undecodable message becomes a
    /// `response` error so that it is visible rather than silently dropped.
    init(serverText text: String) {
        do {
            switch try JSONDecoder().decode(LiveServerMessage.self, from: Data(text.utf8)) {
            case .subscribed(let datastores): self = .subscribed(datastores)
            case .changed(let datastore, let sequence): self = .changed(datastore, sequence: sequence)
            case .error(let error, let datastore): self = .error(error, datastore)
            }
        } catch {
            self = .error(
                RooftopError(.response, "unreadable live message from the server: \(text.prefix(200))", cause: error), nil)
        }
    }
}
