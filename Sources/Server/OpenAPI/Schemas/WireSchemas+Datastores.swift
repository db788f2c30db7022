import RooftopShared

extension DatastoreSharing: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "Who may use a datastore. `roles` never holds `none` or the owner.",
        examples: [
            #"{"datastore": ".Xy3", "owner": "u1", "roles": {"*": "viewer", "role:Team": "editor"}}"#
        ],
        recorded: [#"{"datastore": ":app", "roles": {}}"#],
        properties: [
            "owner": .init("The owner's user ID; absent for `:app`.", reference: "Identifier"),
            "roles": .init(
                "Roles by principal.",
                schema: """
                    type: object
                    additionalProperties:
                      $ref: '#/components/schemas/SharingRole'
                    """,
                constraints: [.keys("Principal")])
        ])
}

extension DatastoreInfo: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "What a caller learns about a datastore.",
        examples: [
            #"""
                {"id": ".Xy3", "kind": "shareable", "title": "Trip plan", "owner": "u1", "role": \#
                "editor", "updatedAt": 1763779346123, "usage": {"records": 12, "maxRecords": 100000, \#
                "bytes": 5120, "maxBytes": 10485760}}
                """#
        ],
        properties: [
            "title": .init("A title for people, when one is set."),
            "owner": .init("The owner's user ID; absent for `:app`.", reference: "Identifier"),
            "role": .init("The caller's effective role."),
            "updatedAt": .init("When the datastore last changed, when known.")
        ])
}

extension DatastoreUsage: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            A datastore's size against the server's limits: its live records and their bytes as the limits count \
            them. A write that would pass a limit is refused with sizeLimit.
            """,
        recorded: [
            #"{"records": 12, "maxRecords": 100000, "bytes": 5120, "maxBytes": 10485760}"#
        ],
        properties: [
            "records": .init("Live (not deleted) records.", constraints: [.minimum(0)]),
            "maxRecords": .init("The most records a datastore may hold.", constraints: [.minimum(0)]),
            "bytes": .init("The datastore's size in bytes, as the limit counts it.", constraints: [.minimum(0)]),
            "maxBytes": .init("The largest size a datastore may have.", constraints: [.minimum(0)])
        ])
}

extension DatastoreList: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "The datastores the caller can use.",
        recorded: [
            #"""
                {"datastores": [{"id": ".Xy3", "kind": "shareable", "owner": "u1", "role": "editor", \#
                "title": "Trip", "updatedAt": 1763779346123}]}
                """#
        ],
        properties: [
            "datastores": .init("The datastores.")
        ])
}

extension CreateDatastoreRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            A request to create a shareable datastore; the server chooses its ID and the caller becomes its owner.
            """,
        examples: [
            #"{"title": "Trip plan"}"#
        ],
        properties: [
            "title": .init(
                "A title for people, at most 1000 UTF-8 bytes. `null` is the same as absent.",
                constraints: [.maxLength(1000)])
        ])
}

extension SetRoleRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A request to give a principal a role on a shareable datastore (`none` removes it).",
        examples: [
            #"{"principal": "role:Team", "role": "editor"}"#
        ])
}
