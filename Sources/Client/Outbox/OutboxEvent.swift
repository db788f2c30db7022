import RooftopShared

/// Something that happened to one queued change of the offline queue, as ``Outbox/events``
/// reports it.
///
/// ```swift
/// for await event in client.outbox.events {
///     if case .rejected(let error) = event.kind { showProblem(event.key, error) }
/// }
/// ```
public struct OutboxEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// The change was written to the queue (durably).
        case queued
        /// The change was handed to the network (marked `sent` first, so a crash re-sends it with
        /// the same ID).
        case sent
        /// The server applied the change: the object's new version and the merge decisions taken
        /// against concurrent changes. A change folded into an earlier queued change of the same
        /// object by a rebase is acknowledged with that change.
        case acknowledged(version: Int64, merges: [MergeDecision])
        /// The server refused the change; it is set aside (``Outbox/rejected()``) with the
        /// object's local state, and the changes behind it go on.
        case rejected(RooftopError)
        /// Sending failed for a passing reason (no connection, a timeout, a busy server); the
        /// change is pending again and is retried after a delay (retry number `attempt`).
        case retrying(attempt: Int, after: Duration)
        /// Sending failed for a reason a retry will not fix by itself (the session expired, say);
        /// the change is pending and waits for ``Outbox/resume()`` or a new sign-in.
        case stalled(RooftopError)
    }

    /// The queued change's ID.
    public var mutationId: MutationID
    /// The object it changes.
    public var key: ObjectKey
    /// What happened.
    public var kind: Kind

    /// An event.
    public init(mutationId: MutationID, key: ObjectKey, kind: Kind) {
        self.mutationId = mutationId
        self.key = key
        self.kind = kind
    }
}

/// Where one queued change is (``Outbox/status(of:)``).
public enum OutboxStatus: Sendable, Equatable {
    /// Waiting in the queue to be sent (again).
    case pending
    /// Handed to the network; the answer is not known yet.
    case sent
    /// Applied by the server, giving the object this version. Remembered while the client lives.
    case acknowledged(version: Int64)
    /// Refused by the server, with its error code and message; set aside for the app.
    case rejected(code: RooftopError.Code, message: String)
}

/// A queued change the server refused, set aside with the object's local state at that moment
/// so that the app can repair it (``Outbox/requeue(_:with:)``) or drop it (``Outbox/discard(_:)``).
public struct RejectedChange: Sendable, Equatable, Identifiable {
    /// The refused change's mutation ID.
    public var mutationId: MutationID
    /// The object.
    public var key: ObjectKey
    /// The change as it was sent.
    public var change: ObjectChange
    /// Why the server refused it.
    public var error: RooftopError
    /// The object's local view when the refusal arrived (the refused change included), `nil` when
    /// the object was deleted locally.
    public var localState: ObjectSnapshot?
    /// When the refusal arrived.
    public var rejectedAt: Timestamp
    /// Changes queued after this one on the same object that a rebase over pulled changes folded
    /// into it before it was sent, and the refused changes it requeued (``Outbox/requeue(_:with:)``):
    /// their IDs (from `saveEventually()`) are refused with it, and their status reads as its
    /// refusal. Empty when none were.
    public var foldedMutationIds: [MutationID]

    /// The mutation ID.
    public var id: MutationID { mutationId }

    init(_ row: RejectedRow) {
        mutationId = row.mutation.mutationId
        key = ObjectKey(datastore: row.mutation.datastore, className: row.mutation.className, objectId: row.mutation.objectId)
        change = row.mutation.change
        error = row.error
        localState = row.localState
        rejectedAt = row.rejectedAt
        foldedMutationIds = row.folded
    }
}
