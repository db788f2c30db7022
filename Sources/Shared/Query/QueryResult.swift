/// What running a ``Query`` gives: a page of results, the total count and the included objects;
/// also the server's answer to a ``QueryRequest`` (``QueryResponse``).
///
/// Wire form: `{"objects": [...], "totalCount": 42, "included": [...]}` with objects in the
/// ``ObjectSnapshot`` form. `included` may be left out (no includes); unknown keys are ignored,
/// so that a newer server can add some.
///
/// ```swift
/// let result = QueryEvaluator.run(query, over: objects, lookup: lookup, canRead: canRead)
/// print("\(result.objects.count) of \(result.totalCount)")
/// ```
public struct QueryResult: Hashable, Sendable, Codable {
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

    private enum CodingKeys: String, CodingKey { case objects, totalCount, included }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` when `objects` or `totalCount` is missing or malformed, or
    ///   `totalCount` is outside `0...WireBounds.maxCount`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let totalCount = try container.decode(Int.self, forKey: .totalCount)
        // Counts are used in arithmetic by clients: a negative or absurd one is malformed.
        guard (0...WireBounds.maxCount).contains(totalCount) else {
            throw DecodingError.dataCorruptedError(
                forKey: .totalCount, in: container, debugDescription: "totalCount \(totalCount) is out of range")
        }
        self.init(
            objects: try container.decode([ObjectSnapshot].self, forKey: .objects),
            totalCount: totalCount,
            included: try container.decodeIfPresent([ObjectSnapshot].self, forKey: .included) ?? [])
    }
}

/// The server's answer to a ``QueryRequest``: a ``QueryResult`` (the name the API documents).
public typealias QueryResponse = QueryResult
