import RooftopShared

extension FieldOperation: UnionSchema {
    var schemaVariant: String {
        switch self {
        case .set: "SetOperation"
        case .unset: "UnsetOperation"
        case .increment: "IncrementOperation"
        case .listAppend: "ListAppendOperation"
        case .listInsert: "ListInsertOperation"
        case .listRemove: "ListRemoveOperation"
        case .listMove: "ListMoveOperation"
        case .listReplace: "ListReplaceOperation"
        case .relationAdd, .relationRemove: "RelationOperation"
        }
    }

    /// An index of a list operation.
    private static let index = "0-based. Out of range (negative included): `badIndex` when applied."

    static let unionNotes = UnionNotes(
        """
            One change to one field. Operations rather than whole values, so that concurrent changes merge: two \
            increments both count, two list inserts both land.
            """,
        discriminator: "op",
        examples: [#"{"op": "set", "value": 3}"#, #"{"op": "listMove", "from": 0, "to": 3}"#],
        variants: [
            .init("SetOperation", "Sets the field to a value.", recorded: [#"{"op": "set", "value": 3}"#]),
            .init("UnsetOperation", "Removes the field.", recorded: [#"{"op": "unset"}"#]),
            .init(
                "IncrementOperation", "Adds an `int` or `double` amount to a number field (an absent field counts as 0).",
                recorded: [#"{"op": "increment", "amount": 1}"#]),
            .init(
                "ListAppendOperation", "Appends values to a list field (an absent field counts as an empty list).",
                recorded: [#"{"op": "listAppend", "values": [1, "a"]}"#],
                properties: ["values": .init("The values to append.")]),
            .init(
                "ListInsertOperation", "Inserts a value at an index, `0...count`, moving later elements back.",
                recorded: [#"{"op": "listInsert", "index": 0, "value": "a"}"#],
                properties: ["index": .init("Where to insert. \(index)")]),
            .init(
                "ListRemoveOperation", "Removes the element at an index.", recorded: [#"{"op": "listRemove", "index": 2}"#],
                properties: ["index": .init("The element. \(index)")]),
            .init(
                "ListMoveOperation", "Moves the element at `from` so that it ends up at index `to`.",
                recorded: [#"{"op": "listMove", "from": 0, "to": 3}"#],
                properties: ["from": .init("The element. \(index)"), "to": .init("Its new index. \(index)")]),
            .init(
                "ListReplaceOperation", "Replaces the element at an index.",
                recorded: [#"{"op": "listReplace", "index": 1, "value": "b"}"#],
                properties: ["index": .init("The element. \(index)")]),
            .init(
                "RelationOperation",
                "Adds objects to a relation field (an absent field counts as an empty relation), or removes them.",
                recorded: [
                    #"{"op": "relationAdd", "className": "User", "objectIds": ["a", "b"]}"#,
                    #"{"op": "relationRemove", "className": "User", "objectIds": ["a"]}"#,
                ],
                properties: [
                    "op": .init("Add or remove."),
                    "className": .init("The class of the member objects.", reference: "AnyIdentifier"),
                    "objectIds": .init("The objects.", items: "AnyIdentifier"),
                ]),
        ])
}

extension ObjectChange: UnionSchema {
    var schemaVariant: String {
        switch self {
        case .update: "ObjectUpdate"
        case .delete: "ObjectDelete"
        }
    }

    static let unionNotes = UnionNotes(
        """
            A change to a whole object: field updates (which create the object when it does not exist), or its \
            deletion.
            """,
        examples: [
            #"{"fields": {"name": "Ada", "score": 3}}"#,
            #"{"update": [{"field": "score", "do": {"op": "increment", "amount": 1}}]}"#,
            #"{"delete": true}"#,
        ],
        variants: [
            .init(
                "ObjectUpdate",
                """
                    Plain fields to set, then field updates applied in order, and optionally a new ACL. A creation is \
                    usually plain `fields` alone.
                    """,
                recorded: [
                    #"""
                        {"fields": {"name": "Ada"}, "update": [{"field": "score", "do": {"op": "increment", \#
                        "amount": 1}}], "acl": {"*": {"read": true}}}
                        """#
                ],
                properties: [
                    "fields": .init(
                        "Fields to set, applied first, in name order. `null` is the same as absent.",
                        constraints: [.keys("AnyIdentifier")]),
                    "update": .init("The updates, after `fields` (default none). `null` is the same as absent."),
                    "acl": .init("The object's new ACL. `null` is the same as absent."),
                ]),
            .init(
                "ObjectDelete", "Deletes the object; cannot be combined with updates.", recorded: [#"{"delete": true}"#],
                properties: ["delete": .init("Always `true`.", schema: "const: true")]),
        ])
}
