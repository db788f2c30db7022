import RooftopShared

/// Applies a batch of mutations in one write transaction: each atomically and on its own (one
/// refusal does not fail the batch), each idempotent by mutation ID, all committed together.
///
/// A client sends all of an object's pending mutations in order, each based on the version the
/// client last synced. Within a batch, mutations of one object based on the same version form a
/// chain: they are the same client's successive changes, not concurrent ones, so each is merged
/// only with the changes others committed since that version (never with the chain's own), and
/// with the client's earlier changes taken into account (see ``WriteChain``). Mutations with no
/// base version (creations, blind writes) chain the same way after the first of them that left
/// the object standing: the later ones were made on top of it, so they are based on the version
/// it made and merged with what others committed since (never simply applied on top of the
/// chain's last result, which would let them overwrite concurrent changes they never saw).
final class PushService: Sendable {
    private let objects: ObjectService
    private let limits: Limits

    init(objects: ObjectService, limits: Limits) {
        self.objects = objects
        self.limits = limits
    }

    /// Applies a push: everything the mutations need is read first, then they are applied in one
    /// write transaction (each atomically on its own: a refusal rolls back only its mutation) and
    /// committed together, durably, before the answer; then live subscribers are told. A compact
    /// push is answered without the objects.
    /// - Throws: What ``Limits/checkPush(_:)`` throws; storage errors (nothing is then committed).
    func push(_ request: PushRequest, context: AccessContext) async throws -> PushResponse {
        try limits.checkPush(request.mutations)
        let mutations = request.mutations
        let prepared = try await objects.prepare(mutations, context: context, idempotent: true)
        let objects = self.objects
        let applied = try await objects.transaction { writer in
            try objects.lock(mutations, prepared, context: context, idempotent: true, writer: writer)
            var chains = PushChains()
            return try mutations.enumerated().map { index, original in
                let (mutation, chain) = chains.next(original)
                let recorder = MergeInputsRecorder()
                let one: ObjectService.Applied
                do {
                    one = try objects.apply(
                        mutation, prepared[index], context: context, idempotent: true, chain: chain, recorder: recorder,
                        writer: writer)
                } catch let error as RooftopError {
                    one = ObjectService.Applied(result: .rejected(mutationId: mutation.mutationId, error: error))
                }
                chains.record(one, of: mutation, sentBase: original.baseVersion, recorder: recorder)
                return one
            }
        }
        await objects.published(applied)
        let results = applied.map(\.result)
        return PushResponse(results: request.compact ? results.map(\.compacted) : results)
    }
}

/// The chains of one push: for each object, the client's mutations of it sent on the same base
/// version, as applied so far (see ``PushService``).
private struct PushChains {
    private struct Key: Hashable {
        var datastore: DatastoreID
        var className: String
        var objectId: String

        init(_ mutation: Mutation) {
            (datastore, className, objectId) = (mutation.datastore, mutation.className, mutation.objectId)
        }
    }

    private struct Chain {
        var sentBase: Int64?
        /// For mutations sent with no base: the version the first of them made, which the later
        /// ones are based on (`nil` when it did not leave the object standing).
        var anchor: Int64?
        var write: WriteChain
    }

    private var chains: [Key: Chain] = [:]

    /// The mutation as it is applied, and the chain it continues: one with a base is merged
    /// knowing the chain; one with no base is based on the version the first of them made and
    /// merged knowing the chain too, or, when that first one lost to a delete, loses to it too.
    func next(_ mutation: Mutation) -> (Mutation, WriteChain?) {
        guard let chain = chains[Key(mutation)], chain.sentBase == mutation.baseVersion else { return (mutation, nil) }
        guard mutation.baseVersion == nil else { return (mutation, chain.write) }
        var rebased = mutation
        guard let anchor = chain.anchor else {
            // The first lost to a delete: the later ones lose to it too.
            rebased.baseVersion = chain.write.lastVersion
            return (rebased, nil)
        }
        rebased.baseVersion = anchor
        return (rebased, chain.write)
    }

    /// Extends the object's chain with an applied mutation (refusals leave it as it was).
    mutating func record(
        _ applied: ObjectService.Applied, of mutation: Mutation, sentBase: Int64?, recorder: MergeInputsRecorder
    ) {
        guard case .applied(_, let version, let object, _) = applied.result else { return }
        let key = Key(mutation)
        let current = chains[key].flatMap { $0.sentBase == sentBase ? $0 : nil }
        var next = current?.write ?? WriteChain(changes: [], origins: [], lastVersion: version)
        if let origin = applied.origin { next.origins.insert(origin) }
        next.lastVersion = version
        var anchor = current?.anchor
        var lostToDelete = false
        if sentBase == nil, object == nil, case .update = mutation.change, version > 0 { lostToDelete = true }
        if anchor == nil, lostToDelete {
            // An update that lost to a delete: the mutations chained to it were made on the same
            // state, from before that delete, and lose to it too instead of re-creating the object.
            next.lastVersion = version - 1
        }
        if sentBase == nil, current == nil {
            // The first mutation with no base: when it left the object standing, the later ones
            // are based on the version it made (its own change is in that version, so it is not
            // one of the chain's changes).
            if object != nil, version > 0 { anchor = version }
            chains[key] = Chain(sentBase: nil, anchor: anchor, write: next)
            return
        }
        next.changes.append(mutation.change)
        // A replayed result decided nothing now: the next write loads everything since the base.
        next.known = recorder.recorded
        chains[key] = Chain(sentBase: sentBase, anchor: anchor, write: next)
    }
}
