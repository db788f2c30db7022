import RooftopShared

/// Applies a batch of mutations in one write transaction: each atomically and on its own (one
/// refusal does not fail the batch), each idempotent by mutation ID, all committed together.
///
/// A client sends all of an object's pending mutations in order, each based on the version the
/// client last synced. Within a batch, mutations of one object based on the same version form a
/// chain: they are the same client's successive changes, not concurrent ones, so each is merged
/// only with the changes others committed since that version (never with the chain's own), and
/// with the client's earlier changes taken into account (see ``WriteChain``). Mutations with no
/// base version (creations, blind writes) simply apply on top of the chain's last result.
final class PushService: Sendable {
    private let objects: ObjectService
    private let limits: Limits

    init(objects: ObjectService, limits: Limits) {
        self.objects = objects
        self.limits = limits
    }

    /// Applies a push: everything the mutations need is read first, then they are applied in one
    /// write transaction (each atomically on its own: a refusal rolls back only its mutation) and
    /// committed together, durably, before the answer; then live subscribers are told.
    /// - Throws: What ``Limits/checkPush(_:)`` throws; storage errors (nothing is then committed).
    func push(_ request: PushRequest, context: AccessContext) async throws -> PushResponse {
        try limits.checkPush(request.mutations)
        let mutations = request.mutations
        let prepared = try await objects.prepare(mutations, context: context, idempotent: true)
        let scope = ObjectService.idempotencyScope(context)
        let objects = self.objects
        let applied = try await objects.transaction { writer in
            struct ObjectKey: Hashable {
                var datastore: DatastoreID
                var className: String
                var objectId: String
            }
            struct Chain {
                var sentBase: Int64?
                var write: WriteChain
            }
            var chains: [ObjectKey: Chain] = [:]
            var applied: [ObjectService.Applied] = []
            applied.reserveCapacity(mutations.count)
            for (index, original) in mutations.enumerated() {
                var mutation = original
                let key = ObjectKey(datastore: mutation.datastore, className: mutation.className, objectId: mutation.objectId)
                let sentBase = mutation.baseVersion
                let chain = chains[key].flatMap { $0.sentBase == sentBase ? $0 : nil }
                var writeChain: WriteChain?
                if let chain {
                    if sentBase == nil {
                        mutation.baseVersion = chain.write.lastVersion
                    } else {
                        writeChain = chain.write
                    }
                }
                let recorder = MergeInputsRecorder()
                let one: ObjectService.Applied
                do {
                    one = try objects.apply(
                        mutation, prepared[index], context: context, idempotent: true, chain: writeChain,
                        recorder: recorder, writer: writer)
                } catch let error as RooftopError {
                    one = ObjectService.Applied(result: .rejected(mutationId: mutation.mutationId, error: error))
                }
                if case .applied(_, let version, let object, _) = one.result {
                    var next = chain?.write ?? WriteChain(changes: [], origins: [], lastVersion: version)
                    next.changes.append(mutation.change)
                    next.origins.insert(ObjectService.origin(of: mutation.mutationId, scope: scope))
                    next.lastVersion = version
                    if sentBase == nil, object == nil, case .update = mutation.change, version > 0 {
                        // An update that lost to a delete: the mutations chained to it were made on
                        // the same state, from before that delete, and lose to it too instead of
                        // re-creating the object over it.
                        next.lastVersion = version - 1
                    }
                    // A replayed result decided nothing now: the next write loads everything since the base.
                    next.known = recorder.recorded
                    chains[key] = Chain(sentBase: sentBase, write: next)
                }
                applied.append(one)
            }
            return applied
        }
        await objects.published(applied)
        return PushResponse(results: applied.map(\.result))
    }
}
