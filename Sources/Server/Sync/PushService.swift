import RooftopShared

/// Applies a batch of mutations: each atomically and on its own (one refusal does not fail the
/// batch), each idempotent by mutation ID.
///
/// A client sends all of an object's pending mutations in order, each based on the version the
/// client last synced. Within a batch, a mutation based on the same version as an earlier one of
/// the batch for the same object is applied on top of that earlier one's result rather than
/// merged against it: they are the same client's successive changes, not concurrent ones.
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
        // For each object: the base version the client sent, and the version its last mutation
        // in this batch produced.
        var chains: [ObjectKey: (sentBase: Int64?, version: Int64)] = [:]
        var results: [MutationResult] = []
        results.reserveCapacity(request.mutations.count)
        for var mutation in request.mutations {
            let key = ObjectKey(datastore: mutation.datastore, className: mutation.className, objectId: mutation.objectId)
            let sentBase = mutation.baseVersion
            if let chain = chains[key], chain.sentBase == sentBase {
                mutation.baseVersion = chain.version
            }
            let result: MutationResult
            do {
                result = try await objects.write(mutation, context: context, idempotent: true)
            } catch let error as RooftopError {
                result = .rejected(mutationId: mutation.mutationId, error: error)
            }
            if case .applied(_, let version, _, _) = result {
                chains[key] = (sentBase, version)
            }
            results.append(result)
        }
        return PushResponse(results: results)
    }
}
