import RooftopShared

/// The local view of an object: the server's last state with the queued changes applied in order.
///
/// A queued change that no longer applies (say, an increment of a field that a pulled change
/// turned into a string) is left out of the view; the server will refuse it, and the refusal is
/// set aside for the app.
enum LocalView {
    /// The view, and whether the object is deleted in it.
    static func compute(key: ObjectKey, server: ObjectSnapshot?, queued: [Mutation]) -> (ObjectSnapshot?, deleted: Bool) {
        var view = server
        var deleted = false
        for mutation in queued {
            switch mutation.change {
            case .delete:
                view = nil
                deleted = true
            case .update:
                let base = view ?? ObjectSnapshot(
                    className: key.className, objectId: key.objectId, datastore: key.datastore)
                guard let applied = try? base.applying(mutation.change) else { continue }
                view = applied
                deleted = false
            }
        }
        return (view, deleted)
    }
}
