extension AccessPolicy {
    /// Whether a caller may see an object's changes `records`: the complete history after some
    /// version, oldest first, up to the object's current state, whose ACL is `currentACL`.
    ///
    /// Changes reveal the values the object had (their prior values) and the ACLs it was given, so
    /// the caller must have been able to read every version they span, the one before the first
    /// included. An object's ACL changes only through a change that sets one, and a delete keeps
    /// the ACL in its tombstone, so when no change sets an ACL and no delete is followed by a
    /// re-creation, the ACL was `currentACL` throughout. (The ACL set by a change that created
    /// the object is its first, not a change: nothing was readable before it.) Otherwise the
    /// history is refused as a whole (`false`): it spans an ACL change (the caller may have gained
    /// access only later) or an earlier incarnation of the ID (a deleted object, possibly someone
    /// else's). An admin may read everything. Role membership and class permissions are judged as
    /// they are now.
    /// - Parameters:
    ///   - records: The changes, oldest first, complete (see ``OperationRecord/complete(_:after:through:)``).
    ///   - currentACL: The ACL of the object's current version (its tombstone's when deleted).
    ///   - context: Who asks.
    ///   - fromCreation: Whether the first record created the object (the version before it was
    ///     none, or a tombstone).
    public static func mayReadHistory(
        _ records: [OperationRecord], currentACL: ACL?, context: AccessContext, fromCreation: Bool = false
    ) -> Bool {
        if context.isAdmin { return true }
        guard ACL.allowsRead(currentACL, for: context) else { return false }
        for (index, record) in records.enumerated() {
            switch record.change {
            case .delete:
                // Only the last change may be a delete: the current version is its tombstone.
                if index != records.count - 1 { return false }
            case .update(_, let acl):
                if acl != nil, index > 0 || !fromCreation { return false }
            }
        }
        return true
    }
}
