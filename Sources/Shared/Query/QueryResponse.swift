/// The server's answer to a ``QueryRequest``: the wire form of a ``QueryResult``.
///
/// Wire form: `{"objects": [...], "totalCount": 42, "included": [...]}` with objects in the
/// ``ObjectSnapshot`` form. `included` may be left out (no includes); unknown keys are ignored,
/// so that a newer server can add some.
///
/// ```swift
/// let response = QueryResponse(QueryEvaluator.run(query, over: objects, lookup: lookup, canRead: canRead))
/// let body = try JSONEncoder().encode(response)
/// ```
public struct QueryResponse: Hashable, Sendable, Codable {
    /// The page of matching objects, in order.
    public var objects: [ObjectSnapshot]
    /// How many objects matched before offset and limit.
    public var totalCount: Int
    /// The objects reached through the include paths (see ``QueryResult/included``).
    public var included: [ObjectSnapshot]

    /// Creates a response.
    /// - Parameters:
    ///   - objects: The page of matching objects.
    ///   - totalCount: The number of matches before paging.
    ///   - included: The included objects (default none).
    public init(objects: [ObjectSnapshot], totalCount: Int, included: [ObjectSnapshot] = []) {
        self.objects = objects
        self.totalCount = totalCount
        self.included = included
    }

    /// The response carrying a result.
    public init(_ result: QueryResult) {
        self.init(objects: result.objects, totalCount: result.totalCount, included: result.included)
    }

    /// The result this response carries.
    public var result: QueryResult {
        QueryResult(objects: objects, totalCount: totalCount, included: included)
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
