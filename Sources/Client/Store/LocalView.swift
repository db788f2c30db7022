import RooftopShared
import Synchronization

/// The local view of an object: the server's last state with the queued changes applied in order.
///
/// A queued change that no longer applies (say, an increment of a field that a pulled change
/// turned into a string) is left out of the view, and said so (``skipped``, which the store logs);
/// the server will refuse it, and the refusal is set aside for the app.
struct LocalView {
    /// The view; `nil` for an object deleted in it, or never created.
    var view: ObjectSnapshot?
    /// Whether the object is deleted in it.
    var deleted: Bool
    /// The queued changes left out, each with why it does not apply.
    var skipped: [(mutation: MutationID, error: RooftopError)]

    /// The skipped changes already said: a view is computed again with every pull page or save
    /// that touches its object, and a change that does not apply is logged once, not each time.
    /// Bounded (mutation IDs are unique): past it, the oldest may be said again.
    static let said = Mutex(RecentSet<MutationID>(capacity: 4_096))

    /// The skipped changes not said before (``said``), which this call marks as said.
    func takeUnsaid() -> [(mutation: MutationID, error: RooftopError)] {
        guard !skipped.isEmpty else { return [] }
        return Self.said.withLock { said in skipped.filter { said.insert($0.mutation) } }
    }

    /// The view of `server` (the server's last state, if any) with `queued` applied in order.
    static func compute(key: ObjectKey, server: ObjectSnapshot?, queued: [Mutation]) -> LocalView {
        var view = server
        var deleted = false
        var skipped: [(mutation: MutationID, error: RooftopError)] = []
        for mutation in queued {
            switch mutation.change {
            case .delete:
                view = nil
                deleted = true
            case .update:
                let base = view ?? ObjectSnapshot(
                    className: key.className, objectId: key.objectId, datastore: key.datastore)
                do {
                    view = try base.applying(mutation.change)
                    deleted = false
                } catch {
                    skipped.append((mutation.mutationId, error))
                }
            }
        }
        return LocalView(view: view, deleted: deleted, skipped: skipped)
    }
}
