extension ObjectMerge {
    /// One side's changes to an object, regrouped by field.
    struct Side {
        /// The fields changed, in the order first changed.
        private(set) var fields: [String] = []
        /// Each field's operations, in order.
        private(set) var operations: [String: [FieldOperation]] = [:]
        /// The last ACL set, if any.
        private(set) var acl: ACL?
        /// Whether the side ends by deleting the object.
        private(set) var deleted = false
        /// Whether the side made no change at all.
        private(set) var isEmpty: Bool
        private var updates: [FieldUpdate] = []

        /// Regroups changes, checking that nothing follows a delete and that fields may be written.
        init(_ changes: [ObjectChange]) throws(RooftopError) {
            isEmpty = changes.isEmpty
            for change in changes {
                guard !deleted else {
                    throw RooftopError(
                        .invalidOperation, "a change follows the delete of its object: a delete is final")
                }
                switch change {
                case .delete:
                    deleted = true
                case .update(let changeUpdates, let changeACL):
                    for update in changeUpdates {
                        try ObjectMerge.withField(update.field) { () throws(RooftopError) in
                            try FieldUpdate.validateField(update.field)
                        }
                        if operations[update.field] == nil { fields.append(update.field) }
                        operations[update.field, default: []].append(update.operation)
                        updates.append(update)
                    }
                    if let changeACL { acl = changeACL }
                }
            }
        }

        /// Whether an update on this side set the ACL.
        var setsACL: Bool { acl != nil }

        /// The fields after this side's updates, starting from `base`.
        /// - Throws: The first update that fails, with its field named.
        func values(from base: [String: Value]) throws(RooftopError) -> [String: Value] {
            try FieldUpdate.apply(updates, to: base)
        }

        /// The side's changes as one change: `nil` for none, the delete, or the updates grouped
        /// by field (fields are independent, so grouping changes nothing).
        var combined: ObjectChange? {
            if deleted { return .delete }
            // An empty update still counts: it creates the object when it does not exist.
            if isEmpty { return nil }
            return .update(
                fields.flatMap { field in (operations[field] ?? []).map { FieldUpdate(field, $0) } }, acl: acl)
        }
    }
}
