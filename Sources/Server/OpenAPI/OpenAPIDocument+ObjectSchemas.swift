import RooftopShared

/// Component schemas of objects and their changes: snapshots, field operations, object changes,
/// merge decisions, and the REST object bodies of `RESTBodies.swift`.
extension OpenAPIDocument {
    static var objectSchemas: [(String, OpenAPIJSON)] {
        typealias S = OpenAPISchema
        return [
            ("ObjectSnapshot", objectSnapshotSchema),
            ("FieldOperation", fieldOperationSchema),
            ("SetOperation", operation("set", "Sets the field to a value.", ["value": S.ref("Value")])),
            ("UnsetOperation", operation("unset", "Removes the field.", [:])),
            (
                "IncrementOperation",
                operation(
                    "increment", "Adds an `int` or `double` amount to a number field (an absent field counts as 0).",
                    ["amount": S.ref("Value")])
            ),
            (
                "ListAppendOperation",
                operation(
                    "listAppend", "Appends values to a list field (an absent field counts as an empty list).",
                    ["values": S.array(S.ref("Value"), "The values to append.")])
            ),
            (
                "ListInsertOperation",
                operation(
                    "listInsert", "Inserts a value at an index, `0...count`, moving later elements back.",
                    ["index": index("Where to insert."), "value": S.ref("Value")])
            ),
            (
                "ListRemoveOperation",
                operation("listRemove", "Removes the element at an index.", ["index": index("The element.")])
            ),
            (
                "ListMoveOperation",
                operation(
                    "listMove", "Moves the element at `from` so that it ends up at index `to`.",
                    ["from": index("The element."), "to": index("Its new index.")])
            ),
            (
                "ListReplaceOperation",
                operation(
                    "listReplace", "Replaces the element at an index.",
                    ["index": index("The element."), "value": S.ref("Value")])
            ),
            ("RelationOperation", relationOperationSchema),
            (
                "FieldUpdate",
                S.object(
                    "An operation on a named field.", required: ["field", "do"],
                    properties: ["field": S.ref("Identifier", "The field's name."), "do": S.ref("FieldOperation")],
                    examples: [["field": "score", "do": ["op": "increment", "amount": 1]]])
            ),
            (
                "ObjectChange",
                S.oneOf(
                    "A change to a whole object: field updates (which create the object when it does not exist), or its deletion.",
                    [S.ref("ObjectUpdate"), S.ref("ObjectDelete")],
                    examples: [["update": [["field": "score", "do": ["op": "set", "value": 3]]]], ["delete": true]])
            ),
            (
                "ObjectUpdate",
                S.object(
                    "Field updates applied in order, and optionally a new ACL.", required: [],
                    properties: [
                        "update": S.array(S.ref("FieldUpdate"), "The updates (default none)."),
                        "acl": S.ref("ACL", "The object's new ACL."),
                    ])
            ),
            (
                "ObjectDelete",
                S.object(
                    "Deletes the object; cannot be combined with updates.", required: ["delete"],
                    properties: ["delete": ["const": true, "description": "Always `true`."]])
            ),
            ("MergeDecision", mergeDecisionSchema),
            ("ObjectWriteBody", objectWriteBodySchema),
            (
                "WriteResponse",
                S.object(
                    "The answer to a REST write.", required: ["version", "merges"],
                    properties: [
                        "version": S.integer("The object's new version.", minimum: 0),
                        "object": S.ref("ObjectSnapshot", "The object after the write."),
                        "merges": S.array(S.ref("MergeDecision"), "Merge decisions taken against concurrent changes."),
                    ])
            ),
            (
                "ObjectWithIncludes",
                S.object(
                    "The answer to a REST get: the object and the readable objects its `include` paths point to.",
                    required: ["object", "included"],
                    properties: [
                        "object": S.ref("ObjectSnapshot"),
                        "included": S.array(S.ref("ObjectSnapshot"), "Objects reached through `include`."),
                    ])
            ),
            (
                "OperationRecord",
                S.object(
                    "One committed change of an object.", required: ["version", "change", "priorValues"],
                    properties: [
                        "version": S.integer("The version the change produced.", minimum: 1),
                        "change": S.ref("ObjectChange", "The change as applied (after any merge)."),
                        "priorValues": S.map(
                            S.object(
                                "A prior value: `{\"value\": v}` when the field held `v` (null included), `{}` when it was absent.",
                                required: [], properties: ["value": S.ref("Value")]),
                            "The value each changed field had before the change.",
                            keys: S.ref("Identifier")),
                        "origin": S.string(
                            "An opaque tag of the push mutation that made the change (absent for other writes)."),
                    ])
            ),
            (
                "OperationList",
                S.object(
                    "An object's committed changes after a version, oldest first.", required: ["operations"],
                    properties: ["operations": S.array(S.ref("OperationRecord"), "The changes.")])
            ),
        ]
    }

    private static var objectSnapshotSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "An object as stored and sent.", required: ["className", "objectId", "datastore", "fields", "version"],
            properties: [
                "className": S.ref("Identifier", "The class (table) name."),
                "objectId": S.ref("Identifier", "The object's ID."),
                "datastore": S.ref("DatastoreID", "The datastore that holds the object."),
                "fields": S.map(S.ref("Value"), "Field values by name; built-in fields are not in here."),
                "acl": S.ref("ACL", "Who may read and write the object; absent for no object-level restriction."),
                "createdAt": S.ref("Timestamp", "When the server first stored the object."),
                "updatedAt": S.ref("Timestamp", "When the server last changed the object."),
                "version": S.integer("The server's version: 0 before the first save, then increasing with each change.", minimum: 0),
                "fieldVersions": S.map(
                    S.integer("A version.", minimum: 0), "The version at which each field last changed, when known."),
            ],
            examples: [
                [
                    "className": "GameScore", "objectId": "abc", "datastore": ":app", "fields": ["score": 10],
                    "acl": ["*": ["read": true]], "createdAt": 1_763_779_346_123, "updatedAt": 1_763_779_346_123,
                    "version": 1,
                ]
            ])
    }

    private static var fieldOperationSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        let variants = [
            "SetOperation", "UnsetOperation", "IncrementOperation", "ListAppendOperation", "ListInsertOperation",
            "ListRemoveOperation", "ListMoveOperation", "ListReplaceOperation", "RelationOperation",
        ]
        return S.oneOf(
            "One change to one field. Operations rather than whole values, so that concurrent changes merge: two increments both count, two list inserts both land.",
            variants.map { S.ref($0) }, discriminator: "op",
            mapping: [
                "set": "SetOperation", "unset": "UnsetOperation", "increment": "IncrementOperation",
                "listAppend": "ListAppendOperation", "listInsert": "ListInsertOperation",
                "listRemove": "ListRemoveOperation", "listMove": "ListMoveOperation",
                "listReplace": "ListReplaceOperation", "relationAdd": "RelationOperation",
                "relationRemove": "RelationOperation",
            ],
            examples: [["op": "set", "value": 3], ["op": "listMove", "from": 0, "to": 3]])
    }

    private static var relationOperationSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "Adds objects to a relation field (an absent field counts as an empty relation), or removes them.",
            required: ["op", "className", "objectIds"],
            properties: [
                "op": S.enumeration(["relationAdd", "relationRemove"], "Add or remove."),
                "className": S.ref("Identifier", "The class of the member objects."),
                "objectIds": S.array(S.ref("Identifier"), "The objects."),
            ])
    }

    private static var mergeDecisionSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "What a merge did to one field both sides changed. A missing `base`, `local`, `remote` or `result` is an absent field (or a deleted object); `null` is a field set to null.",
            required: ["field", "rule", "resolution"],
            properties: [
                "field": S.ref("Identifier", "The field's name."),
                "base": S.ref("Value", "The value at the common base."),
                "local": S.ref("Value", "The value with the incoming changes alone."),
                "remote": S.ref("Value", "The value with the stored (concurrent) changes alone."),
                "rule": S.ref("MergeRule", "The rule configured for the field."),
                "result": S.ref("Value", "The value after the merge."),
                "resolution": S.enumeration(
                    ["rule", "listTransform", "relationSet", "objectDeleted"],
                    "How the result was reached: by the rule, by transforming list indices, by applying relation changes from both sides, or because one side deleted the object."
                ),
            ],
            examples: [
                ["field": "score", "base": 10, "local": 15, "remote": 20, "rule": "sum", "result": 25, "resolution": "rule"]
            ])
    }

    private static var objectWriteBodySchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "The body of a REST create or update: plain `fields` to set (applied first, in name order) and/or explicit `update`s, and optionally an ACL. `objectId` is read only when creating (default: a new ID); `baseVersion` only when updating (absent: a blind write over whatever is stored).",
            required: [],
            properties: [
                "objectId": S.ref("Identifier", "The new object's ID (create only)."),
                "fields": S.map(S.ref("Value"), "Fields to set.", keys: S.ref("Identifier")),
                "update": S.array(S.ref("FieldUpdate"), "Field updates, after `fields`."),
                "acl": S.ref("ACL", "The object's ACL (default on create: the class's default ACL)."),
                "baseVersion": S.integer(
                    "The version the change was made on (update only); concurrent changes since are merged.", minimum: 0),
            ],
            examples: [
                ["objectId": "o1", "fields": ["score": 10], "acl": ["*": ["read": true]]],
                ["update": [["field": "score", "do": ["op": "increment", "amount": 1]]], "baseVersion": 3],
            ])
    }

    /// A field operation variant: `op` fixed, plus its operands.
    private static func operation(
        _ op: String, _ description: String, _ operands: KeyValuePairs<String, OpenAPIJSON>
    ) -> OpenAPIJSON {
        let properties = [("op", OpenAPISchema.constant(op))] + operands.map { ($0.key, $0.value) }
        return .object([
            .init(key: "type", value: "object"),
            .init(key: "description", value: .string(description)),
            .init(key: "required", value: .array(properties.map { .string($0.0) })),
            .init(key: "properties", value: .members(properties)),
            .init(key: "additionalProperties", value: false),
        ])
    }

    private static func index(_ description: String) -> OpenAPIJSON {
        OpenAPISchema.integer("\(description) 0-based.", minimum: 0)
    }
}
