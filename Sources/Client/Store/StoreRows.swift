import RooftopShared

/// The signed-in user and session, as kept across restarts.
struct StoredSession: Codable, Sendable, Hashable {
    /// The user, with effective roles (used for local ACL checks).
    var user: UserInfo
    /// The session token.
    var token: String
    /// When the session expires.
    var expiresAt: Timestamp
}

/// An object as the local store keeps it.
struct LocalObjectRow: Sendable, Hashable {
    /// Which object.
    var key: ObjectKey
    /// The last state the server confirmed (nil: never synced, e.g. created offline).
    var server: ObjectSnapshot?
    /// The local view: the server state with the queued changes applied (nil when deleted).
    var local: ObjectSnapshot?
    /// Whether the object is deleted, locally (queued delete) or on the server (tombstone).
    var deleted: Bool
}

/// Where a queued mutation is.
enum OutboxState: String, Sendable, Hashable, Codable {
    /// Waiting to be sent (again).
    case pending
    /// Handed to the network; its answer is not known yet.
    case sent
}

/// A queued mutation of the offline queue.
struct OutboxRow: Sendable, Equatable {
    /// The queue order.
    var seq: Int64
    /// The mutation, with its idempotency ID.
    var mutation: Mutation
    /// Pending or sent.
    var state: OutboxState
    /// How many times sending failed for a passing reason.
    var attempts: Int
    /// The last such failure.
    var lastError: RooftopError?
    /// Not before this time (milliseconds since the epoch), after a failure.
    var nextAttemptAt: Int64?
    /// The mutations a rebase folded into this one (``Rebase``), which share its answer; empty
    /// for none.
    var folded: [MutationID] = []
}

/// A queued row without its mutation: what the schedule decides from (which objects are due),
/// so that a round reads whole only the rows it sends, not the whole queue.
struct OutboxHead: Sendable, Equatable {
    /// The queue order.
    var seq: Int64
    /// The object the row changes.
    var key: ObjectKey
    /// Pending or sent.
    var state: OutboxState
    /// Not before this time (milliseconds since the epoch), after a failure.
    var nextAttemptAt: Int64?
}

/// A mutation the server refused, set aside with the object's local state at that time.
struct RejectedRow: Sendable, Equatable {
    /// The refused mutation.
    var mutation: Mutation
    /// Why.
    var error: RooftopError
    /// The object's local view when the refusal arrived (what the app may want to repair).
    var localState: ObjectSnapshot?
    /// When it was refused.
    var rejectedAt: Timestamp
    /// The mutations a rebase folded into this one before it was refused (refused with it).
    var folded: [MutationID] = []
}

/// The cached result of a query (for fetch policies): the IDs in order and the total count.
struct QueryCacheRow: Sendable, Hashable {
    /// The query's cache key.
    var hash: String
    /// The datastore it ran in.
    var datastore: DatastoreID
    /// The result's objects, in order.
    var objects: [ObjectKey]
    /// The server's total count.
    var totalCount: Int
    /// When it was fetched.
    var fetchedAt: Timestamp
}

/// An object as a page of a local query reads it: its stored texts, not decoded. A page makes
/// live instances from the texts (``RooftopObject`` decodes its text when a field, version or
/// date of it is first read), so a page of objects costs the rows it reads, not their fields
/// (decoding every object of a page was most of a page's time).
struct StoredObjectRow: Sendable {
    /// Which object.
    var key: ObjectKey
    /// The last state the server confirmed, as stored: whole, or as a delta from the local view
    /// (``form``).
    var server: String?
    /// The local view, as stored: `nil` when it is the server's state (``localIsServer``) or the
    /// object is deleted.
    var local: String?
    /// How the row holds the two (``StoredForm``).
    var form: StoredForm
    /// Whether the object is deleted.
    var deleted: Bool

    /// Whether the local view is the server's state, stored once: `StoreTransaction.put` stores
    /// it so when the two are equal (nothing queued changes the object).
    var localIsServer: Bool { form == .localIsServer }

    /// The local view's text: the server's when they are the same.
    var localText: String? { localIsServer ? server : local }

    /// The local view, decoded.
    /// - Throws: `cache` when the stored text is not an object.
    func localSnapshot() throws(RooftopError) -> ObjectSnapshot? {
        try localText.map { text throws(RooftopError) in try snapshot(from: text) }
    }

    /// The row with its texts decoded.
    /// - Throws: `cache` when a stored text is not an object.
    func decoded() throws(RooftopError) -> LocalObjectRow {
        let (server, local) = try form.states(server: server, local: self.local, of: key)
        return LocalObjectRow(key: key, server: server, local: local, deleted: deleted)
    }

    /// This object as stored in `text`.
    /// - Throws: `cache` when the text is not an object.
    private func snapshot(from text: String) throws(RooftopError) -> ObjectSnapshot {
        try StoredForm.snapshot(of: key, from: text)
    }
}
