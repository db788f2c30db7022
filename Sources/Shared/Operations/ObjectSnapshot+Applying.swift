/// Applying a whole change to an object.
extension ObjectSnapshot {
    /// The object after a change, or `nil` when the change deletes it.
    ///
    /// Field updates apply in order (see ``FieldUpdate/apply(_:to:)``) and a given ACL replaces
    /// the object's. Identity, timestamps and versions are not touched: the server stamps those
    /// when it commits.
    ///
    /// ```swift
    /// let next = try snapshot.applying(.update([FieldUpdate("score", .increment(1))]))
    /// ```
    ///
    /// - Parameter change: The change.
    /// - Returns: The changed copy, or `nil` for ``ObjectChange/delete``.
    /// - Throws: The first failing update's error; `self` is unchanged either way.
    public func applying(_ change: ObjectChange) throws(RooftopError) -> ObjectSnapshot? {
        switch change {
        case .delete:
            return nil
        case .update(let updates, let acl):
            var copy = self
            copy.fields = try FieldUpdate.apply(updates, to: fields)
            if let acl { copy.acl = acl }
            return copy
        }
    }
}
