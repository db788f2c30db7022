import RooftopShared

/// A merge decision the client observed, with the object it is about (``SyncEngine/mergeDecisions``).
///
/// Decisions come from two places that run the same merge (`ObjectMerge`): the server, when it
/// merged a queued change with concurrent ones (`push`), and the client, when a pull brought
/// remote changes and the object's unsent changes were rebased over them (`rebase`).
///
/// ```swift
/// for await event in client.sync.mergeDecisions {
///     print(event.key, event.decision.field, event.decision.localValue, "→", event.decision.result)
/// }
/// ```
public struct MergeEvent: Sendable, Hashable {
    /// Where the decision was taken.
    public enum Source: Sendable, Hashable {
        /// By the server, applying this queued change.
        case push(MutationID)
        /// By the client, rebasing queued changes over pulled ones.
        case rebase
    }

    /// The object.
    public var key: ObjectKey
    /// The decision (field, base, local and remote values, rule, result).
    public var decision: MergeDecision
    /// Where it was taken.
    public var source: Source

    /// An event.
    public init(key: ObjectKey, decision: MergeDecision, source: Source) {
        self.key = key
        self.decision = decision
        self.source = source
    }
}
