/// A query as a client sends it: either the AST, or the text form with its parameters for the
/// server to parse.
///
/// Wire form, one of:
/// - `{"query": {"className": "GameScore", "predicate": {...}, ...}}` (see ``Query``)
/// - `{"className": "GameScore", "text": "where score > ? order by score desc", "parameters": [100]}`
///   (`parameters` optional, default none)
///
/// ```swift
/// let request = QueryRequest.text(className: "GameScore", text: "where score > ?", parameters: [100])
/// let query = try request.validatedQuery()
/// ```
public enum QueryRequest: Hashable, Sendable {
    /// A query as an AST.
    case query(Query)
    /// A query as text with `?` parameters (see ``Query/parse(className:text:parameters:)``).
    case text(className: String, text: String, parameters: [Value])

    /// The query the request names, parsing the text form if needed (not validated).
    /// - Throws: ``RooftopError/Code/invalidQuery`` when the text does not parse.
    public func makeQuery() throws(RooftopError) -> Query {
        switch self {
        case .query(let query): query
        case .text(let className, let text, let parameters):
            try Query.parse(className: className, text: text, parameters: parameters)
        }
    }

    /// The query the request names, parsed and validated: what a server runs.
    /// - Parameter maxDepth: The deepest predicate nesting allowed (default
    ///   ``Query/defaultMaxDepth``).
    /// - Throws: ``RooftopError/Code/invalidQuery`` when the text does not parse or the query is
    ///   not valid (see ``Query/validate(maxDepth:)``).
    public func validatedQuery(maxDepth: Int = Query.defaultMaxDepth) throws(RooftopError) -> Query {
        let query = try makeQuery()
        try query.validate(maxDepth: maxDepth)
        return query
    }
}

extension QueryRequest: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case query, className, text, parameters }

    /// Decodes either wire form.
    /// - Throws: `DecodingError` when both or neither form is given, or a part is malformed.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.query) {
            try rejectUnknownKeys(decoder, allowed: ["query"], in: "query request with 'query'")
            self = .query(try container.decode(Query.self, forKey: .query))
            return
        }
        guard container.contains(.text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "a query request needs either 'query', or 'className' and 'text'"))
        }
        try rejectUnknownKeys(decoder, allowed: ["className", "text", "parameters"], in: "query request with 'text'")
        self = .text(
            className: try container.decode(String.self, forKey: .className),
            text: try container.decode(String.self, forKey: .text),
            parameters: try container.decodeIfPresent([Value].self, forKey: .parameters) ?? [])
    }

    /// Encodes the wire form of the case.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .query(let query):
            try container.encode(query, forKey: .query)
        case .text(let className, let text, let parameters):
            try container.encode(className, forKey: .className)
            try container.encode(text, forKey: .text)
            try container.encode(parameters, forKey: .parameters)
        }
    }
}
