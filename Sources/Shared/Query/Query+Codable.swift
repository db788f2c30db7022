extension Query: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case className, predicate, order, limit, offset, includes
    }

    /// Decodes the wire form (see ``Query``); `order`, `limit`, `offset`, `includes` and
    /// `predicate` may be left out.
    /// - Throws: `DecodingError` for a missing `className`, an unknown key or a malformed part.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "query")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            className: try container.decode(String.self, forKey: .className),
            predicate: try container.decodeIfPresent(QueryPredicate.self, forKey: .predicate),
            order: try container.decodeIfPresent([QueryOrder].self, forKey: .order) ?? [],
            limit: try container.decodeIfPresent(Int.self, forKey: .limit),
            offset: try container.decodeIfPresent(Int.self, forKey: .offset) ?? 0,
            includes: try container.decodeIfPresent([[String]].self, forKey: .includes) ?? [])
    }

    /// Encodes the wire form; `predicate` and `limit` are left out when `nil`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(className, forKey: .className)
        try container.encodeIfPresent(predicate, forKey: .predicate)
        try container.encode(order, forKey: .order)
        try container.encodeIfPresent(limit, forKey: .limit)
        try container.encode(offset, forKey: .offset)
        try container.encode(includes, forKey: .includes)
    }
}

extension QueryOrder: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case field, descending }

    /// Decodes `{"field": ..., "descending": ...}` (`descending` optional, default `false`).
    /// - Throws: `DecodingError` for a missing `field` or an unknown key.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "order key")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            try container.decode(String.self, forKey: .field),
            descending: try container.decodeIfPresent(Bool.self, forKey: .descending) ?? false)
    }

    /// Encodes `{"field": ..., "descending": ...}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(field, forKey: .field)
        try container.encode(descending, forKey: .descending)
    }
}
