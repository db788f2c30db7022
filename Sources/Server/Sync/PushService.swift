import RooftopShared

/// Applies a batch of mutations: each atomically and on its own (one refusal does not fail the
/// batch), each idempotent by mutation ID.
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

    func push(_ request: PushRequest, context: AccessContext) async throws -> PushResponse {
        try limits.checkPush(request.mutations)
        struct ObjectKey: Hashable {
            var datastore: DatastoreID
            var className: String
            var objectId: String
        }
        struct Chain {
            var sentBase: Int64?
            var write: WriteChain
        }
        let scope = ObjectService.idempotencyScope(context)
        var chains: [ObjectKey: Chain] = [:]
        var results: [MutationResult] = []
        results.reserveCapacity(request.mutations.count)
        for var mutation in request.mutations {
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
            let result: MutationResult
            do {
                result = try await objects.write(
                    mutation, context: context, idempotent: true, chain: writeChain, recorder: recorder)
            } catch let error as RooftopError {
                result = .rejected(mutationId: mutation.mutationId, error: error)
            }
            if case .applied(_, let version, let object, _) = result {
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
            results.append(result)
        }
        return PushResponse(results: results)
    }
}
