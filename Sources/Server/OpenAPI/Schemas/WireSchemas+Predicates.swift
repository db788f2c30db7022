import RooftopShared

extension QueryRequest: UnionSchema {
    var schemaVariant: String {
        switch self {
        case .query: "QueryTreeRequest"
        case .text: "QueryTextRequest"
        }
    }

    static let unionNotes = UnionNotes(
        "A query, as its JSON tree or as text with `?` parameters for the server to parse.",
        examples: [
            #"{"query": {"className": "GameScore", "predicate": {"field": "score", "op": ">", "value": 100}}}"#,
            #"{"className": "GameScore", "text": "where score > ? order by score desc", "parameters": [100]}"#,
        ],
        variants: [
            .init(
                "QueryTreeRequest", "A query as its JSON tree.",
                recorded: [#"{"query": {"className": "GameScore", "predicate": {"field": "score", "op": ">", "value": 100}}}"#]),
            .init(
                "QueryTextRequest",
                "A query as text (`where ... order by ... limit ... offset ... include ...`) with one parameter per `?` mark.",
                recorded: [#"{"className": "GameScore", "text": "where score > ? and tag in ?", "parameters": [100, ["a"]]}"#],
                properties: [
                    "className": .init("The class queried.", reference: "AnyIdentifier"),
                    "text": .init("The query text.", constraints: [.examples([#""where score > ? and tag in ? order by score desc""#])]),
                    "parameters": .init(
                        "The values of the `?` marks, in order (default none). `null` is the same as absent."),
                ]),
        ])
}

extension QueryPredicate: UnionSchema {
    var schemaVariant: String {
        switch self {
        case .and: "PredicateAnd"
        case .or: "PredicateOr"
        case .not: "PredicateNot"
        case .thisIn: "PredicateThisIn"
        case .comparison: "PredicateComparison"
        case .in, .notIn: "PredicateIn"
        case .exists, .notExists: "PredicateExists"
        case .startsWith: "PredicateStartsWith"
        case .listContains: "PredicateContains"
        case .containsAll: "PredicateContainsAll"
        case .near: "PredicateNear"
        case .withinBox: "PredicateWithinBox"
        }
    }

    /// The note on a condition's field.
    private static let field = PropertyNote("The field.", reference: "Identifier")
    /// Two conditions, as operands.
    private static let operands = #"[{"field": "a", "op": "=", "value": 1}, {"field": "b", "op": "exists"}]"#

    static let unionNotes = UnionNotes(
        """
            A condition on objects. A missing field matches no positive condition: only `!=`, `notIn`, `notExists` \
            and `not` match it. Conditions read built-in fields too (`objectId`, `createdAt`, `updatedAt`). Unknown \
            members are refused.
            """,
        examples: [
            #"{"and": [{"field": "score", "op": ">=", "value": 100}, {"field": "tag", "op": "in", "values": ["a", "b"]}]}"#
        ],
        variants: [
            .init(
                "PredicateAnd", "Every operand holds.", recorded: [#"{"and": \#(operands)}"#],
                properties: ["and": .init("The operands (at least two).", constraints: [.minItems(2)])]),
            .init(
                "PredicateOr", "At least one operand holds.", recorded: [#"{"or": \#(operands)}"#],
                properties: ["or": .init("The operands (at least two).", constraints: [.minItems(2)])]),
            .init(
                "PredicateNot", "The operand does not hold: its exact complement.",
                recorded: [#"{"not": {"field": "a", "op": "exists"}}"#]),
            .init(
                "PredicateThisIn",
                """
                    The object itself is one of the references: an object ID equal to its `objectId`, or a pointer with \
                    its class and ID.
                    """,
                recorded: [#"{"thisIn": ["abc", {"$pointer": {"className": "Post", "objectId": "def"}}]}"#],
                properties: [
                    "thisIn": .init(
                        "Object IDs or `$pointer` values.",
                        schema: """
                            type: array
                            items:
                              anyOf:
                              - type: string
                                description: An object ID; a string that is no ID matches nothing.
                              - $ref: '#/components/schemas/PointerValue'
                            """)
                ]),
            .init(
                "PredicateComparison",
                """
                    The field is present and compares to `value` as `op` says, in the value order (`1 = 1.0`; across kinds \
                    the kind order applies). `!=` also matches a missing field.
                    """,
                recorded: ComparisonOperator.allCases.map { #"{"field": "score", "op": "\#($0.rawValue)", "value": 1}"# },
                constants: ["op"],
                properties: ["field": field, "op": .init("The comparison.")]),
            .init(
                "PredicateIn", "`in`: the field is present and equivalent to one of `values`; `notIn`: its complement.",
                recorded: ["in", "notIn"].map { #"{"field": "tag", "op": "\#($0)", "values": ["a", 1]}"# },
                constants: ["op"],
                properties: ["field": field, "op": .init("In or not in."), "values": .init("The values.")]),
            .init(
                "PredicateExists", "`exists`: the field is present (an explicit null exists); `notExists`: it is missing.",
                recorded: ["exists", "notExists"].map { #"{"field": "tag", "op": "\#($0)"}"# },
                constants: ["op"],
                properties: ["field": field, "op": .init("Exists or not.")]),
            .init(
                "PredicateStartsWith", "The field is a string whose UTF-8 bytes start with the prefix's.",
                recorded: [#"{"field": "name", "op": "startsWith", "prefix": "Ad"}"#],
                constants: ["op"],
                properties: ["field": field, "prefix": .init("The prefix.")]),
            .init(
                "PredicateContains",
                """
                    The field is a list with an element equivalent to `value`, or a relation holding it (a pointer of the \
                    relation's class).
                    """,
                recorded: [#"{"field": "tags", "op": "contains", "value": "a"}"#],
                constants: ["op"],
                properties: ["field": field]),
            .init(
                "PredicateContainsAll", "The field is a list or relation containing every value as `contains` does.",
                recorded: [#"{"field": "tags", "op": "containsAll", "values": ["a", "b"]}"#],
                constants: ["op"],
                properties: ["field": field, "values": .init("The values.")]),
            .init(
                "PredicateNear",
                """
                    The field is a geo point, within `maxDistanceMeters` of `point` when given. Without an explicit order, \
                    the first `near` reached through `and`s sorts results nearest first.
                    """,
                recorded: [
                    #"{"field": "at", "op": "near", "point": {"latitude": 40.4, "longitude": -3.7}, "maxDistanceMeters": 5000}"#
                ],
                constants: ["op"],
                properties: [
                    "field": field,
                    "maxDistanceMeters": .init(
                        "The greatest distance (haversine, inclusive). `null` is the same as absent."),
                ]),
            .init(
                "PredicateWithinBox",
                """
                    The field is a geo point inside the box; a box whose southwest longitude is greater than its \
                    northeast longitude crosses the antimeridian.
                    """,
                recorded: [
                    #"""
                        {"field": "at", "op": "withinBox", "southwest": {"latitude": 40, "longitude": -4}, \#
                        "northeast": {"latitude": 41, "longitude": -3}}
                        """#
                ],
                constants: ["op"],
                properties: ["field": field]),
        ])
}
