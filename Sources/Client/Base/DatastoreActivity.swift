import RooftopShared
import Synchronization

/// What the engines are doing for each datastore, kept in memory for ``DatastoreStatus``: pulls
/// running, changes announced but not pulled, a datastore the server lost, the last error, and
/// whether the client is in touch with the server.
final class DatastoreActivity: Sendable {
    /// One datastore's activity.
    struct Entry: Equatable {
        /// Pulls running now.
        var pulls = 0
        /// The server announced changes not pulled yet.
        var incoming = false
        /// The server no longer has the datastore (or the user lost access): the local copy was
        /// dropped.
        var needsReset = false
        /// The last error of a push or pull; cleared by a success.
        var lastError: RooftopError?
        /// Continuous sync follows the datastore (the server confirmed the subscription).
        var subscribed = false
    }

    private struct State {
        var connected = false
        var entries: [DatastoreID: Entry] = [:]
    }

    private let state = Mutex(State())
    /// Announces a change (of the datastore named, or of all with `nil`).
    let changes = Broadcaster<DatastoreID?>()

    /// Whether the client is in touch with the server: the live channel is up, or (without
    /// continuous sync) the last request got an answer.
    var connected: Bool { state.withLock { $0.connected } }

    /// A datastore's activity.
    func entry(_ datastore: DatastoreID) -> Entry {
        state.withLock { $0.entries[datastore] ?? Entry() }
    }

    /// Changes a datastore's activity (and announces it when it changed).
    func update(_ datastore: DatastoreID, _ body: (inout Entry) -> Void) {
        let changed = state.withLock { state in
            var entry = state.entries[datastore] ?? Entry()
            let before = entry
            body(&entry)
            state.entries[datastore] = entry
            return entry != before
        }
        if changed { changes.publish(datastore) }
    }

    /// Records whether the server can be reached.
    func setConnected(_ connected: Bool) {
        let changed = state.withLock { state in
            defer { state.connected = connected }
            return state.connected != connected
        }
        if changed { changes.publish(nil) }
    }

    /// Records the outcome of a request about some datastores: an error for them (and, for a
    /// connectivity error, the connection lost), or a success. A cancelled request (sync stopped,
    /// the client shut down) is neither.
    func record(_ error: RooftopError?, for datastores: some Sequence<DatastoreID>) {
        if error?.code == .cancelled { return }
        for datastore in datastores { update(datastore) { $0.lastError = error } }
        if let error {
            if error.isConnectivity { setConnected(false) }
        } else {
            setConnected(true)
        }
    }
}

extension RooftopError {
    /// Whether the error says the server could not be reached or did not answer in time.
    var isConnectivity: Bool { code == .noConnection || code == .timeout || code == .network || code == .tls }

    /// Whether retrying the same request later may succeed by itself: connectivity, a busy or
    /// failing server, an unreadable answer, a cancelled request.
    var isTransient: Bool {
        isConnectivity || code == .server || code == .retryLater || code == .cancelled || code == .response
            || code == .internal
    }
}
