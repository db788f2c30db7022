extension ObjectMerge {
    /// The next change of a chain, rebased: a client's successive changes of one object made on
    /// the same base version and sent together (one push). `earlier` are the chain's changes
    /// already applied (each rebased in its turn), `local` is the next; `remote` are the changes
    /// others committed since the base, `base` the fields at the base, `current` the fields as
    /// stored now (after `remote` and `earlier`).
    ///
    /// Field by field: a field nobody else changed takes `local`'s operations as they are; a field
    /// others changed too is merged with the chain's earlier operations on it as one local
    /// sequence (so its rule sees the client's final value against the remote one), and the step
    /// is the difference: the new operations when the longer merge only adds some (increments
    /// stay increments, list edits stay list edits), else a `set` of the merged value. The ACL
    /// follows ``rebase(local:over:base:className:rules:)``: `local`'s stands unless a remote
    /// change set one.
    ///
    /// ```swift
    /// // The client incremented twice; someone else added 5 meanwhile (rule `sum`).
    /// let step = try ObjectMerge.rebaseStep(
    ///     local: .update([FieldUpdate("n", .increment(1))]), after: [.update([FieldUpdate("n", .increment(1))])],
    ///     over: [.update([FieldUpdate("n", .increment(5))])], base: ["n": 0], current: ["n": 6],
    ///     className: "T", rules: MergeRules(classes: ["T": ["n": .sum]]))
    /// step.change  // .update([n: increment 1]): 7
    /// ```
    /// - Throws: ``RooftopError/Code/invalidOperation`` when a remote change is a delete (the object
    ///   was deleted and created again: the caller merges with what came after its chain instead),
    ///   and what ``FieldMerge/rebase(field:base:local:over:rule:)`` throws for operations that do
    ///   not replay on the base.
    public static func rebaseStep(
        local: ObjectChange, after earlier: [ObjectChange], over remote: [ObjectChange], base: [String: Value],
        current: [String: Value], className: String, rules: MergeRules
    ) throws(RooftopError) -> Result {
        let remoteSide = try Side(remote)
        guard !remoteSide.deleted else {
            throw RooftopError(.invalidOperation, "a concurrent delete interleaves with the chain")
        }
        let localSide = try Side([local])
        var updates: [FieldUpdate] = []
        var decisions: [MergeDecision] = []
        for field in localSide.fields {
            let own = localSide.operations[field] ?? []
            guard let theirs = remoteSide.operations[field] else {
                updates += own.map { FieldUpdate(field, $0) }
                continue
            }
            let before = earlier.flatMap { $0.updates.filter { $0.field == field }.map(\.operation) }
            let rule = rules.rule(forClass: className, field: field)
            let step = try withField(field) { () throws(RooftopError) -> (operations: [FieldOperation], decision: MergeDecision?) in
                let merged = try FieldMerge.rebase(field: field, base: base[field], local: before, over: theirs, rule: rule)
                let extended = try FieldMerge.rebase(
                    field: field, base: base[field], local: before + own, over: theirs, rule: rule)
                let goal = try FieldOperation.apply(
                    extended.operations, to: try FieldOperation.apply(theirs, to: base[field]))
                let added = Array(extended.operations.dropFirst(merged.operations.count))
                if extended.operations.starts(with: merged.operations),
                    let reached = try? FieldOperation.apply(added, to: current[field]), reached == goal
                {
                    return (added, extended.decision)
                }
                // A list whose elements are the merge's in another order (a chain answered again,
                // its own changes committed before some of others): the new edits, moved onto it.
                if extended.operations.starts(with: merged.operations),
                    case .list(let mergedList)? = try? FieldOperation.apply(
                        merged.operations, to: try FieldOperation.apply(theirs, to: base[field])),
                    case .list(let stored)? = current[field],
                    let moved = ListTransform.transplant(added, from: mergedList, to: stored),
                    (try? FieldOperation.apply(moved, to: current[field])) != nil
                {
                    return (moved, extended.decision)
                }
                return (current[field] == goal ? [] : [goal.map(FieldOperation.set) ?? .unset], extended.decision)
            }
            updates += step.operations.map { FieldUpdate(field, $0) }
            if let decision = step.decision { decisions.append(decision) }
        }
        return Result(change: combined(updates, acl: mergedACL(local: localSide, remote: remoteSide)), decisions: decisions)
    }

    /// The ACL a local side keeps: its own, unless a concurrent remote change set one (as under
    /// ``MergeRule/remote``).
    static func mergedACL(local: Side, remote: Side) -> ACL? {
        remote.setsACL ? nil : local.acl
    }

    /// The rebased change of an object that exists remotely: `nil` when it changes nothing.
    static func combined(_ updates: [FieldUpdate], acl: ACL?) -> ObjectChange? {
        updates.isEmpty && acl == nil ? nil : .update(updates, acl: acl)
    }
}
