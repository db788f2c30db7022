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

    /// The result for a mutation ID, if the response holds one (the first, should it hold
    /// several). A search through the results: to look up many, see ``resultsByMutationID()``.
    public func result(for mutationId: MutationID) -> MutationResult? {
        results.first { $0.mutationId == mutationId }
    }

    /// The results by mutation ID, each the one ``result(for:)`` gives: a push's rows look up
    /// their answers in constant time (a search per row made settling a push of 500 grow with
    /// the square of its size).
    public func resultsByMutationID() -> [MutationID: MutationResult] {
        Dictionary(results.map { ($0.mutationId, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
