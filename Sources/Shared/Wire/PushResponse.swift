/// The answer to a push: one ``MutationResult`` per mutation, in the request's order.
///
/// Wire form:
///
/// ```json
/// {
///   "results": [
///     {"mutationId": "m1", "status": "applied", "version": 4, "object": {<ObjectSnapshot>}},
///     {"mutationId": "m2", "status": "applied", "version": 9},
///     {"mutationId": "m3", "status": "rejected", "error": {"code": "disallowed", "message": "object ACL: ..."}}
///   ]
/// }
/// ```
///
/// (`m2` was a delete: no `object`.)
public struct PushResponse: Equatable, Sendable, Codable {
    /// The results, one per mutation of the request, in the same order.
    public var results: [MutationResult]

    /// Creates a response.
    public init(results: [MutationResult]) {
        self.results = results
    }

    /// The result for a mutation ID, if the response holds one.
    public func result(for mutationId: MutationID) -> MutationResult? {
        results.first { $0.mutationId == mutationId }
    }
}
