/// What running a ``Query`` gives: a page of results, the total count and the included objects.
///
/// ```swift
/// let result = QueryEvaluator.run(query, over: objects, lookup: lookup, canRead: canRead)
/// print("\(result.objects.count) of \(result.totalCount)")
/// ```
public struct QueryResult: Hashable, Sendable {
    /// The matching objects after ordering, offset and limit.
    public var objects: [ObjectSnapshot]
    /// How many objects matched, before offset and limit.
    public var totalCount: Int
    /// The readable objects reached through the query's include paths, each once, sorted by class
    /// name then object ID.
    public var included: [ObjectSnapshot]

    /// Creates a result.
    /// - Parameters:
    ///   - objects: The page of matching objects.
    ///   - totalCount: The number of matches before paging.
    ///   - included: The included objects (default none).
    public init(objects: [ObjectSnapshot], totalCount: Int, included: [ObjectSnapshot] = []) {
        self.objects = objects
        self.totalCount = totalCount
        self.included = included
    }
}
