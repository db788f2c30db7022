import RooftopShared

/// The rebase of an object's queued changes over changes a pull brought (the same
/// `ObjectMerge` the server runs on a push).
///
/// Only rows that never reached the network are rebased (``OutboxRow/mayHaveReachedServer``): a
/// row the server may have applied under its ID must keep its content, and the server merges it
/// when it comes again. The queued changes are rebased as one local side; the rebased change
/// then lives in the object's **first** queued row (its ID kept, its base version moved to the
/// pulled version), and the later rows are removed from the queue: they are *folded* into the
/// first, whose answer (acknowledged or refused) becomes theirs (its row lists them,
/// ``OutboxRow/folded``). When nothing is left to send (a remote delete won, or every local
/// change lost to the rules) every row is removed and acknowledged at the pulled version, as the
/// server would have answered.
struct Rebase: Sendable {
    /// The object.
    let key: ObjectKey
    /// The queued rows rebased, in order (checked again when applying: the queue may have moved).
    let rowIds: [MutationID]
    /// The rebased change and the decisions.
    let result: ObjectMerge.Result
    /// The remote version the changes now apply on.
    let version: Int64

    /// The rebase over an upserted object's operations, or `nil` when it does not apply (rows
    /// that may have reached the server, records that do not reach the pulled version).
    /// - Throws: What the merge throws: a queued change that does not apply to the fields
    ///   before the remote operations (the caller leaves the rows to the server's merge).
    static func over(
        _ object: ObjectSnapshot, records: [OperationRecord], rows: [OutboxRow], rules: MergeRules
    ) throws(RooftopError) -> Rebase? {
        let remote = records.filter { $0.version <= object.version }
        guard let base = commonBase(rows), object.version > base, remote.last?.version == object.version else { return nil }
        let fields = OperationRecord.fields(before: remote, current: object.fields)
        let result = try ObjectMerge.rebase(
            local: rows.map(\.mutation.change), over: remote.map(\.change), base: fields,
            className: object.className, rules: rules)
        return Rebase(key: ObjectKey(object), rowIds: rows.map(\.mutation.mutationId), result: result, version: object.version)
    }

    /// The rebase over a pulled tombstone, from the stored server state at the rows' base
    /// version; `nil` when it does not apply (see ``over(_:records:rows:rules:)``).
    /// - Throws: What the merge throws, as ``over(_:records:rows:rules:)``.
    static func overDelete(
        key: ObjectKey, version: Int64, server: ObjectSnapshot?, rows: [OutboxRow], rules: MergeRules
    ) throws(RooftopError) -> Rebase? {
        guard let base = commonBase(rows), let server, server.version == base, version > base else { return nil }
        let result = try ObjectMerge.rebase(
            local: rows.map(\.mutation.change), over: [.delete], base: server.fields, className: key.className,
            rules: rules)
        return Rebase(key: key, rowIds: rows.map(\.mutation.mutationId), result: result, version: version)
    }

    /// The rows' shared base version (0 for none), when they all have one and none may have
    /// reached the server.
    static func commonBase(_ rows: [OutboxRow]) -> Int64? {
        guard let first = rows.first, rows.allSatisfy({ !$0.mayHaveReachedServer }),
            rows.allSatisfy({ $0.mutation.baseVersion == first.mutation.baseVersion })
        else { return nil }
        return first.mutation.baseVersion ?? 0
    }

    /// What applying did.
    enum Outcome: Sendable {
        /// The rebased change is queued in the first row, which lists the later rows (and what
        /// was folded into them before) as folded into it.
        case queued
        /// Nothing was left to send: the rows were removed, acknowledged at `version`; `folded`,
        /// each row's mutations folded into it before (kept with its row).
        case settled([MutationID], version: Int64, folded: [MutationID: [MutationID]])
    }

    /// Rewrites the queue inside the page's transaction; `nil` when the object's rows are no
    /// longer the ones rebased (sent meanwhile, or more queued).
    func apply(in transaction: StoreTransaction) throws -> Outcome? {
        let rows = try transaction.queued(for: key)
        guard rows.map(\.mutation.mutationId) == rowIds, rows.allSatisfy({ !$0.mayHaveReachedServer }),
            let first = rows.first
        else { return nil }
        guard let change = result.change else {
            for id in rowIds { try transaction.removeFromQueue(id) }
            var folded: [MutationID: [MutationID]] = [:]
            for row in rows where !row.folded.isEmpty { folded[row.mutation.mutationId] = row.folded }
            return .settled(rowIds, version: version, folded: folded)
        }
        var mutation = first.mutation
        mutation.change = change
        mutation.baseVersion = version
        try transaction.replaceQueued(mutation.mutationId, with: mutation)
        // The later rows go, and their answer is the first's: the first row lists them, with
        // what was folded into them before, so that its answer reaches them after a restart too.
        let folded = rows.dropFirst().flatMap { [$0.mutation.mutationId] + $0.folded }
        for row in rows.dropFirst() { try transaction.removeFromQueue(row.mutation.mutationId) }
        if !folded.isEmpty { try transaction.setFolded(mutation.mutationId, first.folded + folded) }
        return .queued
    }
}
