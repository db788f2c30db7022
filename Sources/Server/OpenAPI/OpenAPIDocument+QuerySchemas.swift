import RooftopShared

/// Component schemas of queries: the two request forms, the query AST and its predicates
/// (`QueryPredicate+Codable.swift`), and the answers of query, count and remove.
extension OpenAPIDocument {
    static var querySchemas: [(String, OpenAPIJSON)] {
        typealias S = OpenAPISchema
        return [
            (
                "QueryRequest",
                S.oneOf(
                    "A query, as its JSON tree or as text with `?` parameters for the server to parse.",
                    [S.ref("QueryTreeRequest"), S.ref("QueryTextRequest")],
                    examples: [
                        ["query": ["className": "GameScore", "predicate": ["field": "score", "op": ">", "value": 100]]],
                        ["className": "GameScore", "text": "where score > ? order by score desc", "parameters": [100]],
                    ])
            ),
            (
                "QueryTreeRequest",
                S.object(
                    "A query as its JSON tree.", required: ["query"], properties: ["query": S.ref("Query")])
            ),
            (
                "QueryTextRequest",
                S.object(
                    "A query as text (`where ... order by ... limit ... offset ... include ...`) with one parameter per `?` mark.",
                    required: ["className", "text"],
                    properties: [
                        "className": S.ref("Identifier", "The class queried."),
                        "text": S.string("The query text.", examples: ["where score > ? and tag in ? order by score desc"]),
                        "parameters": S.array(S.ref("Value"), "The values of the `?` marks, in order (default none)."),
                    ])
            ),
            ("Query", querySchema),
            (
                "QueryOrder",
                S.object(
                    "A sort key.", required: ["field"],
                    properties: [
                        "field": S.ref("Identifier", "The field (built-ins `objectId`, `createdAt`, `updatedAt` included)."),
                        "descending": S.boolean("Largest first (default `false`)."),
                    ])
            ),
            ("QueryPredicate", predicateSchema),
            ("PredicateAnd", combinator("and", "Every operand holds.")),
            ("PredicateOr", combinator("or", "At least one operand holds.")),
            (
                "PredicateNot",
                S.object(
                    "The operand does not hold: its exact complement.", required: ["not"],
                    properties: ["not": S.ref("QueryPredicate")])
            ),
            (
                "PredicateThisIn",
                S.object(
                    "The object itself is one of the references: an object ID equal to its `objectId`, or a pointer with its class and ID.",
                    required: ["thisIn"],
                    properties: [
                        "thisIn": S.array(
                            ["oneOf": [S.ref("Identifier"), S.ref("PointerValue")]], "Object IDs or `$pointer` values.")
                    ])
            ),
            (
                "PredicateComparison",
                condition(
                    "The field is present and compares to `value` as `op` says, in the value order (`1 = 1.0`; across kinds the kind order applies). `!=` also matches a missing field.",
                    op: S.enumeration(
                        QueryPredicate.ComparisonOperator.allCases.map(\.rawValue), "The comparison."),
                    operands: ["value": S.ref("Value")])
            ),
            (
                "PredicateIn",
                condition(
                    "`in`: the field is present and equivalent to one of `values`; `notIn`: its complement.",
                    op: S.enumeration(["in", "notIn"], "In or not in."),
                    operands: ["values": S.array(S.ref("Value"), "The values.")])
            ),
            (
                "PredicateExists",
                condition(
                    "`exists`: the field is present (an explicit null exists); `notExists`: it is missing.",
                    op: S.enumeration(["exists", "notExists"], "Exists or not."), operands: [:])
            ),
            (
                "PredicateStartsWith",
                condition(
                    "The field is a string whose UTF-8 bytes start with the prefix's.", op: S.constant("startsWith"),
                    operands: ["prefix": S.string("The prefix.")])
            ),
            (
                "PredicateContains",
                condition(
                    "The field is a list with an element equivalent to `value`, or a relation holding it (a pointer of the relation's class).",
                    op: S.constant("contains"), operands: ["value": S.ref("Value")])
            ),
            (
                "PredicateContainsAll",
                condition(
                    "The field is a list or relation containing every value as `contains` does.",
                    op: S.constant("containsAll"), operands: ["values": S.array(S.ref("Value"), "The values.")])
            ),
            (
                "PredicateNear",
                condition(
                    "The field is a geo point, within `maxDistanceMeters` of `point` when given. Without an explicit order, the first `near` reached through `and`s sorts results nearest first.",
                    op: S.constant("near"),
                    operands: [
                        "point": S.ref("GeoPoint"),
                        "maxDistanceMeters": ["type": "number", "description": "The greatest distance (haversine, inclusive)."],
                    ],
                    optional: ["maxDistanceMeters"])
            ),
            (
                "PredicateWithinBox",
                condition(
                    "The field is a geo point inside the box; a box whose southwest longitude is greater than its northeast longitude crosses the antimeridian.",
                    op: S.constant("withinBox"), operands: ["southwest": S.ref("GeoPoint"), "northeast": S.ref("GeoPoint")])
            ),
            (
                "QueryResponse",
                S.object(
                    "One page of query results.", required: ["objects", "totalCount", "included"],
                    properties: [
                        "objects": S.array(S.ref("ObjectSnapshot"), "The page, in the query's order."),
                        "totalCount": S.integer("How many readable objects match, ignoring `limit` and `offset`.", minimum: 0),
                        "included": S.array(S.ref("ObjectSnapshot"), "Readable objects reached through `includes`."),
                    ])
            ),
            (
                "CountResponse",
                S.object(
                    "How many readable objects a query matches.", required: ["count"],
                    properties: ["count": S.integer("The count.", minimum: 0)])
            ),
            (
                "RemoveRequest",
                S.object(
                    "Deletes the objects a query matches, in its order: the first `limit` after the query's `offset`, or all. Objects the caller may read but not delete are skipped.",
                    required: ["query"],
                    properties: [
                        "query": S.ref("QueryRequest"),
                        "limit": S.integer("The most objects to delete (default all).", minimum: 0),
                    ])
            ),
            (
                "RemoveResponse",
                S.object(
                    "How many objects were deleted.", required: ["removed"],
                    properties: ["removed": S.integer("The count.", minimum: 0)])
            ),
        ]
    }

    private static var querySchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        let limits = Limits.default
        return S.object(
            "A query over the objects of one class. Results are ordered by `order` (then by `objectId`), `offset` are skipped and at most `limit` returned. Unknown members are refused.",
            required: ["className"],
            properties: [
                "className": S.ref("Identifier", "The class queried."),
                "predicate": S.ref("QueryPredicate", "The condition; absent matches every object."),
                "order": S.array(S.ref("QueryOrder"), "Sort keys, most significant first (default: by `objectId`)."),
                "limit": S.integer(
                    "The most results (absent: the server's `defaultQueryLimit`, \(limits.defaultQueryLimit) by default; at most `maxQueryLimit`, \(limits.maxQueryLimit)). Ignored by count.",
                    minimum: 0),
                "offset": S.integer("Results to skip (default 0).", minimum: 0),
                "includes": S.array(
                    S.array(S.ref("Identifier"), "A path of pointer fields followed one after the other."),
                    "Pointer paths whose targets are returned in `included`, e.g. `[[\"author\"], [\"author\", \"company\"]]`."),
            ],
            examples: [
                [
                    "className": "GameScore", "predicate": ["field": "score", "op": ">", "value": 100],
                    "order": [["field": "score", "descending": true]], "limit": 10, "offset": 0, "includes": [["author"]],
                ]
            ])
    }

    private static var predicateSchema: OpenAPIJSON {
        let variants = [
            "PredicateAnd", "PredicateOr", "PredicateNot", "PredicateThisIn", "PredicateComparison", "PredicateIn",
            "PredicateExists", "PredicateStartsWith", "PredicateContains", "PredicateContainsAll", "PredicateNear",
            "PredicateWithinBox",
        ]
        return OpenAPISchema.oneOf(
            "A condition on objects. A missing field matches no positive condition: only `!=`, `notIn`, `notExists` and `not` match it. Conditions read built-in fields too (`objectId`, `createdAt`, `updatedAt`). Unknown members are refused.",
            variants.map { OpenAPISchema.ref($0) },
            examples: [
                [
                    "and": [
                        ["field": "score", "op": ">=", "value": 100],
                        ["field": "tag", "op": "in", "values": ["a", "b"]],
                    ]
                ]
            ])
    }

    /// `{"and": [...]}` or `{"or": [...]}`.
    private static func combinator(_ key: String, _ description: String) -> OpenAPIJSON {
        let operands = OpenAPISchema.array(OpenAPISchema.ref("QueryPredicate"), "The operands (at least two).")
            .setting("minItems", 2)
        return .object([
            .init(key: "type", value: "object"),
            .init(key: "description", value: .string(description)),
            .init(key: "required", value: [.string(key)]),
            .init(key: "properties", value: .members([(key, operands)])),
            .init(key: "additionalProperties", value: false),
        ])
    }

    /// A field condition: `field`, `op` and the operands (all required unless listed optional).
    private static func condition(
        _ description: String, op: OpenAPIJSON, operands: KeyValuePairs<String, OpenAPIJSON>, optional: Set<String> = []
    ) -> OpenAPIJSON {
        let properties =
            [("field", OpenAPISchema.ref("Identifier", "The field.")), ("op", op)] + operands.map { ($0.key, $0.value) }
        let required = properties.map(\.0).filter { !optional.contains($0) }
        return .object([
            .init(key: "type", value: "object"),
            .init(key: "description", value: .string(description)),
            .init(key: "required", value: .array(required.map(OpenAPIJSON.string))),
            .init(key: "properties", value: .members(properties)),
            .init(key: "additionalProperties", value: false),
        ])
    }
}
