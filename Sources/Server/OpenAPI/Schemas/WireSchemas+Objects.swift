import RooftopShared

extension GeoPoint: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A point on Earth, in degrees.",
        recorded: [
            #"{"latitude": 40.4, "longitude": -3.7}"#
        ],
        properties: [
            "latitude": .init("Latitude.", constraints: [.minimum(-90.0), .maximum(90.0)]),
            "longitude": .init("Longitude.", constraints: [.minimum(-180.0), .maximum(180.0)])
        ])
}

extension Pointer: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "An object's class and ID.",
        recorded: [
            #"{"className": "Post", "objectId": "abc"}"#
        ],
        properties: [
            "objectId": .init(reference: "AnyIdentifier"),
            "className": .init(reference: "AnyIdentifier")
        ])
}

extension Relation: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A set of objects of one class; the IDs are sorted by their UTF-8 bytes and unique.",
        recorded: [
            #"{"className": "User", "objectIds": ["a", "b"]}"#
        ],
        properties: [
            "className": .init(reference: "AnyIdentifier"),
            "objectIds": .init("The members' object IDs.", items: "AnyIdentifier")
        ])
}

extension ObjectSnapshot: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "An object as stored and sent.",
        examples: [
            #"""
                {"className": "GameScore", "objectId": "abc", "datastore": ":app", "fields": {"score": \#
                10}, "acl": {"*": {"read": true}}, "createdAt": 1763779346123, "updatedAt": \#
                1763779346123, "version": 1}
                """#
        ],
        properties: [
            "className": .init("The class (table) name.", reference: "Identifier"),
            "objectId": .init("The object's ID.", reference: "Identifier"),
            "datastore": .init("The datastore that holds the object."),
            "fields": .init("Field values by name; built-in fields are not in here."),
            "acl": .init("Who may read and write the object; absent for no object-level restriction."),
            "createdAt": .init("When the server first stored the object."),
            "updatedAt": .init("When the server last changed the object."),
            "version": .init(
                "The server's version: 0 before the first save, then increasing with each change.",
                constraints: [.minimum(0)]),
            "fieldVersions": .init("""
                The version at which each field last changed. Absent when every field changed at the \
                object's `version` (a creation, or a change that set every field).
                """, schema: """
                type: object
                additionalProperties:
                  type: integer
                  format: int64
                  description: A version.
                  minimum: 0
                """)
        ])
}

extension FieldUpdate: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "An operation on a named field.",
        examples: [
            #"{"field": "score", "do": {"op": "increment", "amount": 1}}"#
        ],
        properties: [
            "field": .init("The field's name.", reference: "AnyIdentifier")
        ])
}

extension MergeDecision: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            What a merge did to one field both sides changed. A missing `base`, `local`, `remote` or `result` is \
            an absent field (or a deleted object); `null` is a field set to null.
            """,
        examples: [
            #"""
                {"field": "score", "base": 10, "local": 15, "remote": 20, "rule": "sum", "result": 25, \#
                "resolution": "rule"}
                """#
        ],
        properties: [
            "field": .init("The field's name.", reference: "Identifier"),
            "base": .init("The value at the common base."),
            "local": .init("The value with the incoming changes alone."),
            "remote": .init("The value with the stored (concurrent) changes alone."),
            "rule": .init("The rule configured for the field."),
            "result": .init("The value after the merge."),
            "resolution": .init("""
                How the result was reached: by the rule, by transforming list indices, by applying relation \
                changes from both sides, or because one side deleted the object.
                """)
        ])
}

extension ObjectWriteBody: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            The body of a REST create or update: plain `fields` to set (applied first, in name order) and/or \
            explicit `update`s, and optionally an ACL. `objectId` is read only when creating (default: a new ID); \
            `baseVersion` only when updating (absent: a blind write over whatever is stored).
            """,
        examples: [
            #"{"objectId": "o1", "fields": {"score": 10}, "acl": {"*": {"read": true}}}"#,
            #"{"update": [{"field": "score", "do": {"op": "increment", "amount": 1}}], "baseVersion": 3}"#
        ],
        properties: [
            "objectId": .init("""
                The new object's ID when creating (default: a new ID); when updating, if given, it must be the \
                path's. `null` is the same as absent.
                """, reference: "Identifier"),
            "fields": .init(
                "Fields to set. `null` is the same as absent.",
                constraints: [.keys("Identifier")]),
            "update": .init("Field updates, after `fields`. `null` is the same as absent."),
            "acl": .init(
                "The object's ACL (default on create: the class's default ACL). `null` is the same as absent."),
            "baseVersion": .init("""
                The version the change was made on (update only); concurrent changes since are merged. `null` is \
                the same as absent.
                """, constraints: [.minimum(0)])
        ])
}

extension WriteResponse: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "The answer to a REST write.",
        recorded: [
            #"""
                {"merges": [{"base": 10, "field": "score", "local": 15, "remote": 20, "resolution": \#
                "rule", "result": 25, "rule": "sum"}, {"field": "tags", "local": null, "resolution": \#
                "objectDeleted", "rule": "remote"}], "object": {"className": "GameScore", "objectId": \#
                "abc", "datastore": ":app", "fields": {"score": 10}, "version": 1}, "objectId": "o1", \#
                "version": 4}
                """#,
            #"{"merges": [], "objectId": "o1", "version": 5}"#
        ],
        properties: [
            "objectId": .init(
                "The object's ID (for a create without one, the ID the server generated).",
                constraints: [.minLength(1), .maxLength(64)]),
            "version": .init("The object's new version.", constraints: [.minimum(0)]),
            "object": .init("The object after the write."),
            "merges": .init("Merge decisions taken against concurrent changes.")
        ])
}

extension ObjectWithIncludes: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "The answer to a REST get: the object and the readable objects its `include` paths point to.",
        recorded: [
            #"""
                {"included": [{"className": "GameScore", "objectId": "abc", "datastore": ":app", \#
                "fields": {"score": 10}, "version": 1}], "object": {"className": "GameScore", \#
                "objectId": "abc", "datastore": ":app", "fields": {"score": 10}, "version": 1}}
                """#
        ],
        properties: [
            "included": .init("Objects reached through `include`.")
        ])
}

extension OperationRecord: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "One committed change of an object.",
        recorded: [
            #"""
                {"version": 2, "change": {"update": [{"field": "score", "do": {"op": "increment", \#
                "amount": 1}}]}, "priorValues": {"score": {"value": 1}, "name": {}}, "origin": \#
                "abababababababababababababababababababababababababababababababab"}
                """#
        ],
        properties: [
            "version": .init("The version the change produced.", constraints: [.minimum(1)]),
            "change": .init("The change as applied (after any merge)."),
            "priorValues": .init("The value each changed field had before the change.", schema: #"""
                type: object
                additionalProperties:
                  type: object
                  description: 'A prior value: `{"value": v}` when the field held `v` (null included), `{}` when \#
                it was
                    absent.'
                  properties:
                    value:
                      $ref: '#/components/schemas/Value'
                  additionalProperties: false
                propertyNames:
                  $ref: '#/components/schemas/Identifier'
                """#),
            "origin": .init("An opaque tag of the push mutation that made the change (absent for other writes).")
        ])
}

extension OperationList: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "An object's committed changes after a version, oldest first.",
        recorded: [
            #"""
                {"operations": [{"change": {"update": [{"do": {"amount": 1, "op": "increment"}, \#
                "field": "score"}]}, "priorValues": {"name": {}, "note": {"value": null}, "score": \#
                {"value": 1}}, "version": 2}, {"change": {"delete": true}, "priorValues": {}, \#
                "version": 3}]}
                """#
        ],
        properties: [
            "operations": .init("The changes.")
        ])
}
