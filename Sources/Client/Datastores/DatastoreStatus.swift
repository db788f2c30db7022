import RooftopShared

/// A datastore's sync status (the Dropbox Datastore API's `DBDatastoreStatus`), observed with
/// ``Datastore/status``.
///
/// Rooftop queues every saved change durably at once (there is no separate "commit" step), so
/// `outgoing` and `uploading` both speak of the offline queue: `outgoing` while changes wait for
/// the server's answer, `uploading` while some are on the way.
public struct DatastoreStatus: Sendable, Equatable {
    /// Whether the client is in touch with the server: the live channel is up, or (without
    /// continuous sync) the last request got an answer; after ``SyncEngine/stop()`` it keeps its
    /// last reading until the next request. It says the server can be reached, not that changes
    /// arrive by themselves: that is ``subscribed``.
    public var connected: Bool
    /// Whether continuous sync follows the datastore: the server confirmed its subscription
    /// (without a live connection, polling started), so changes committed from now on arrive
    /// without a call. `false` before ``SyncEngine/startContinuous(datastores:scope:)``, while the
    /// live connection is down, and after ``SyncEngine/stop()``. The ready signal:
    ///
    /// ```swift
    /// try await client.sync.startContinuous(datastores: [.app])
    /// for await status in try await client.datastores.open(.app).status where status.subscribed { break }
    /// ```
    public var subscribed: Bool
    /// Whether a pull is running, or the datastore was never pulled (always so for a datastore
    /// used without an account).
    public var downloading: Bool
    /// Whether queued changes are being sent right now.
    public var uploading: Bool
    /// Whether the server announced changes that were not pulled yet.
    public var incoming: Bool
    /// Whether changes are queued, not yet acknowledged by the server.
    public var outgoing: Bool
    /// Whether the server no longer has the datastore (or no longer lets the user see it): its
    /// local copy was dropped; uncache it, or open it again.
    public var needsReset: Bool
    /// The last error of a push or pull of the datastore, cleared by the next success.
    public var lastError: RooftopError?

    /// A status.
    public init(
        connected: Bool = false, subscribed: Bool = false, downloading: Bool = false, uploading: Bool = false,
        incoming: Bool = false, outgoing: Bool = false, needsReset: Bool = false, lastError: RooftopError? = nil
    ) {
        self.connected = connected
        self.subscribed = subscribed
        self.downloading = downloading
        self.uploading = uploading
        self.incoming = incoming
        self.outgoing = outgoing
        self.needsReset = needsReset
        self.lastError = lastError
    }
}
