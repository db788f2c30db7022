import RooftopShared

extension Query: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            A query over the objects of one class. Results are ordered by `order` (then by `objectId`), `offset` \
            are skipped and at most `limit` returned. Unknown members are refused.
            """,
        examples: [
            #"""
                {"className": "GameScore", "predicate": {"field": "score", "op": ">", "value": 100}, \#
                "order": [{"field": "score", "descending": true}], "limit": 10, "offset": 0, \#
                "includes": [["author"]]}
                """#
        ],
        properties: [
            "className": .init("The class queried.", reference: "AnyIdentifier"),
            "predicate": .init(
                "The condition; absent matches every object. `null` is the same as absent."),
            "order": .init(
                "Sort keys, most significant first (default: by `objectId`). `null` is the same as absent."),
            "limit": .init("""
                The most results (absent: the server's `defaultQueryLimit`, 100 by default; at most \
                `maxQueryLimit`, 1000 by default, above which the server answers 413 `sizeLimit`). Ignored by \
                count. `null` is the same as absent.
                """, constraints: [.minimum(0), .maximum(1000)]),
            "offset": .init(
                "Results to skip (default 0). `null` is the same as absent.",
                constraints: [.minimum(0)]),
            "includes": .init(#"""
                Pointer paths whose targets are returned in `included`, e.g. `[["author"], ["author", \#
                "company"]]`. `null` is the same as absent. At most 32 paths, each of 1 to 32 fields \#
                (`invalidQuery`); each step of a path counts as a condition in the query's budget of 1,000. Every \#
                object is read once however many paths reach it; includes that would read more than 10,000 objects \#
                are refused (`sizeLimit`).
                """#, schema: """
                type: array
                maxItems: 32
                items:
                  type: array
                  items:
                    $ref: '#/components/schemas/AnyIdentifier'
                  description: A path of pointer fields followed one after the other.
                """)
        ])
}

extension QueryOrder: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A sort key.",
        recorded: [
            #"{"field": "score", "descending": true}"#
        ],
        properties: [
            "field": .init(
                "The field (built-ins `objectId`, `createdAt`, `updatedAt` included).",
                reference: "AnyIdentifier"),
            "descending": .init("Largest first (default `false`). `null` is the same as absent.")
        ])
}

extension QueryResult: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "One page of query results.",
        recorded: [
            #"""
                {"included": [{"className": "GameScore", "objectId": "abc", "datastore": ":app", \#
                "fields": {"score": 10}, "version": 1}], "objects": [{"className": "GameScore", \#
                "objectId": "abc", "datastore": ":app", "fields": {"score": 10}, "version": 1}], \#
                "totalCount": 42}
                """#
        ],
        properties: [
            "objects": .init("The page, in the query's order."),
            "totalCount": .init(
                "How many readable objects match, ignoring `limit` and `offset`.",
                constraints: [.minimum(0)]),
            "included": .init("Readable objects reached through `includes`.")
        ])
}

extension CountResponse: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "How many readable objects a query matches.",
        recorded: [
            #"{"count": 3}"#
        ],
        properties: [
            "count": .init("The count.", constraints: [.minimum(0)])
        ])
}

extension RemoveRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            Deletes the objects a query matches, in its order: the first `limit` after the query's `offset`, or \
            all. Objects the caller may read but not delete are skipped.
            """,
        recorded: [
            #"""
                {"limit": 10, "query": {"query": {"className": "GameScore", "includes": [["author"], \#
                ["author", "company"]], "limit": 10, "offset": 5, "order": [{"descending": true, \#
                "field": "score"}], "predicate": {"and": [{"field": "score", "op": ">=", "value": \#
                100}, {"or": [{"field": "tag", "op": "in", "values": ["a", {"$double": "1.5"}]}, \#
                {"field": "tag", "op": "notIn", "values": []}]}]}}}}
                """#,
            #"{"query": {"className": "Note", "parameters": [], "text": ""}}"#
        ],
        properties: [
            "limit": .init(
                "The most objects to delete (default all). `null` is the same as absent.",
                constraints: [.minimum(0)])
        ])
}

extension RemoveResponse: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "How many objects were deleted.",
        recorded: [
            #"{"removed": 2}"#
        ],
        properties: [
            "removed": .init("The count.", constraints: [.minimum(0)])
        ])
}
