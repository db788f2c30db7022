/// The JSON wire form of predicates: one JSON object per node, with no optional keys and no
/// unknown keys allowed.
///
/// | predicate | JSON |
/// |---|---|
/// | and | `{"and": [p, p, ...]}` |
/// | or | `{"or": [p, p, ...]}` |
/// | not | `{"not": p}` |
/// | this in | `{"thisIn": ["id", {"$pointer": {"className": "User", "objectId": "u1"}}]}` |
/// | comparison | `{"field": "score", "op": ">", "value": 5}` (op: `=` `!=` `<` `<=` `>` `>=`) |
/// | in / not in | `{"field": "tag", "op": "in", "values": ["a", "b"]}`, `"op": "notIn"` |
/// | exists | `{"field": "tag", "op": "exists"}`, `"op": "notExists"` |
/// | starts with | `{"field": "name", "op": "startsWith", "prefix": "Se"}` |
/// | list contains | `{"field": "tags", "op": "contains", "value": "a"}` |
/// | contains all | `{"field": "tags", "op": "containsAll", "values": ["a", "b"]}` |
/// | near | `{"field": "at", "op": "near", "point": {"latitude": 40.4, "longitude": -3.7}, "maxDistanceMeters": 1000}` (`maxDistanceMeters` optional) |
/// | within box | `{"field": "at", "op": "withinBox", "southwest": {"latitude": …, "longitude": …}, "northeast": {…}}` |
///
/// Values (`value`, `values`) use the portable ``Value`` form, so `5` is an int and
/// `{"$double": "5.0"}` a double. Points are plain ``GeoPoint`` objects.
extension QueryPredicate: Codable {
    /// The `op` names of field conditions other than comparisons.
    private static let conditionOps = [
        "in", "notIn", "exists", "notExists", "startsWith", "contains", "containsAll", "near", "withinBox",
    ]

    /// Deeper JSON is refused before it can exhaust the stack; validation applies the real limit.
    private static let maxDecodingPathLength = 256

    /// Decodes the wire form.
    /// - Throws: `DecodingError.dataCorrupted` naming the problem: an unknown `op`, a missing or
    ///   unexpected key, a value of the wrong type.
    public init(from decoder: any Decoder) throws {
        guard decoder.codingPath.count <= QueryPredicate.maxDecodingPathLength else {
            throw QueryPredicate.corrupted(decoder.codingPath, "the predicate nests too deeply")
        }
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        let keys = Set(container.allKeys.map(\.stringValue))
        let combinators = ["and", "or", "not", "thisIn"].filter(keys.contains)
        if let combinator = combinators.first {
            guard keys.count == 1 else {
                let others = keys.subtracting([combinator]).sorted().map { "'\($0)'" }.joined(separator: ", ")
                throw QueryPredicate.corrupted(
                    decoder.codingPath, "'\(combinator)' cannot share a predicate with other keys; found \(others)")
            }
            let key = AnyCodingKey(combinator)
            switch combinator {
            case "and": self = .and(try container.decode([QueryPredicate].self, forKey: key))
            case "or": self = .or(try container.decode([QueryPredicate].self, forKey: key))
            case "not": self = .not(try container.decode(QueryPredicate.self, forKey: key))
            default: self = .thisIn(try container.decode([ObjectReference].self, forKey: key))
            }
            return
        }
        guard keys.contains("field") else {
            throw QueryPredicate.corrupted(
                decoder.codingPath,
                "a predicate needs one of the keys 'and', 'or', 'not', 'thisIn' or 'field'; found \(QueryPredicate.list(keys))"
            )
        }
        self = try QueryPredicate.decodeCondition(container, keys: keys, path: decoder.codingPath)
    }

    private static func decodeCondition(
        _ container: KeyedDecodingContainer<AnyCodingKey>, keys: Set<String>, path: [any CodingKey]
    ) throws -> QueryPredicate {
        let field = try container.decode(String.self, forKey: AnyCodingKey("field"))
        guard keys.contains("op") else {
            throw corrupted(path, "the condition on '\(field)' needs an 'op'")
        }
        let op = try container.decode(String.self, forKey: AnyCodingKey("op"))
        let operands: Set<String>
        let optional: Set<String>
        switch op {
        case "exists", "notExists": (operands, optional) = ([], [])
        case "in", "notIn", "containsAll": (operands, optional) = (["values"], [])
        case "contains": (operands, optional) = (["value"], [])
        case "startsWith": (operands, optional) = (["prefix"], [])
        case "near": (operands, optional) = (["point"], ["maxDistanceMeters"])
        case "withinBox": (operands, optional) = (["southwest", "northeast"], [])
        default:
            guard ComparisonOperator(rawValue: op) != nil else {
                let known = ComparisonOperator.allCases.map(\.rawValue) + conditionOps
                throw corrupted(path, "unknown op '\(op)'; expected one of \(known.joined(separator: " "))")
            }
            (operands, optional) = (["value"], [])
        }
        let required = operands.union(["field", "op"])
        if let missing = required.subtracting(keys).sorted().first {
            throw corrupted(path, "the '\(op)' condition needs '\(missing)'")
        }
        if let extra = keys.subtracting(required).subtracting(optional).sorted().first {
            throw corrupted(path, "unexpected key '\(extra)' in the '\(op)' condition")
        }
        func decode<T: Decodable>(_ key: String) throws -> T { try container.decode(T.self, forKey: AnyCodingKey(key)) }
        switch op {
        case "in": return .in(field: field, values: try decode("values"))
        case "notIn": return .notIn(field: field, values: try decode("values"))
        case "exists": return .exists(field: field)
        case "notExists": return .notExists(field: field)
        case "startsWith": return .startsWith(field: field, prefix: try decode("prefix"))
        case "contains": return .listContains(field: field, value: try decode("value"))
        case "containsAll": return .containsAll(field: field, values: try decode("values"))
        case "near":
            let maximum = try container.decodeIfPresent(Double.self, forKey: AnyCodingKey("maxDistanceMeters"))
            return .near(field: field, point: try decode("point"), maxDistanceMeters: maximum)
        case "withinBox":
            return .withinBox(field: field, southwest: try decode("southwest"), northeast: try decode("northeast"))
        default:
            // Checked above: every other op is a comparison operator.
            let comparison = ComparisonOperator(rawValue: op) ?? .equal
            return .comparison(field: field, op: comparison, value: try decode("value"))
        }
    }

    /// Encodes the wire form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        func put<T: Encodable>(_ value: T, _ key: String) throws { try container.encode(value, forKey: AnyCodingKey(key)) }
        func condition(_ field: String, _ op: String) throws {
            try put(field, "field")
            try put(op, "op")
        }
        switch self {
        case .and(let operands): try put(operands, "and")
        case .or(let operands): try put(operands, "or")
        case .not(let operand): try put(operand, "not")
        case .thisIn(let references): try put(references, "thisIn")
        case .comparison(let field, let op, let value):
            try condition(field, op.rawValue)
            try put(value, "value")
        case .in(let field, let values):
            try condition(field, "in")
            try put(values, "values")
        case .notIn(let field, let values):
            try condition(field, "notIn")
            try put(values, "values")
        case .exists(let field): try condition(field, "exists")
        case .notExists(let field): try condition(field, "notExists")
        case .startsWith(let field, let prefix):
            try condition(field, "startsWith")
            try put(prefix, "prefix")
        case .listContains(let field, let value):
            try condition(field, "contains")
            try put(value, "value")
        case .containsAll(let field, let values):
            try condition(field, "containsAll")
            try put(values, "values")
        case .near(let field, let point, let maximum):
            try condition(field, "near")
            try put(point, "point")
            if let maximum { try put(maximum, "maxDistanceMeters") }
        case .withinBox(let field, let southwest, let northeast):
            try condition(field, "withinBox")
            try put(southwest, "southwest")
            try put(northeast, "northeast")
        }
    }

    private static func corrupted(_ path: [any CodingKey], _ message: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: message))
    }

    private static func list(_ keys: Set<String>) -> String {
        keys.isEmpty ? "no keys" : keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
    }
}
