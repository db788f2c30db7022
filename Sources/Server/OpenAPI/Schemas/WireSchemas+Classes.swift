import RooftopShared

extension ClassPermissions: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            Class-level permissions (checked before object ACLs; both must allow an operation) and the default ACL \
            of new objects. The server always writes all seven members.
            """,
        recorded: [
            #"""
                {"count": {"role:Staff": true, "u1": true}, "create": {"*": true}, "defaultACL": \#
                {"acl": {"role:Admins": {"read": true}}, "policy": "explicit"}, "delete": {}, "find": \#
                {"requiresAuthentication": true}, "get": {"*": true}, "update": {"*": true}}
                """#
        ],
        properties: [
            "get": .init(#"""
                Who may read one object by ID. Missing: everyone (`{"*": true}`). `null` is the same as absent.
                """#),
            "find": .init(#"""
                Who may query, pull and be notified about objects. Missing: everyone (`{"*": true}`). `null` is \#
                the same as absent.
                """#),
            "count": .init(
                #"Who may count objects. Missing: everyone (`{"*": true}`). `null` is the same as absent."#),
            "create": .init(
                #"Who may create objects. Missing: everyone (`{"*": true}`). `null` is the same as absent."#),
            "update": .init(#"""
                Who may change existing objects. Missing: everyone (`{"*": true}`). `null` is the same as absent.
                """#),
            "delete": .init(
                #"Who may delete objects. Missing: everyone (`{"*": true}`). `null` is the same as absent."#),
            "defaultACL": .init("Missing: `creatorOnly`. `null` is the same as absent.")
        ])
}

extension ClassSettings: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A class's settings: permissions, per-field merge rules and declared indexes.",
        examples: [
            #"""
                {"className": "GameScore", "permissions": {"delete": {}}, "mergeRules": {"score": \#
                "sum"}, "indexes": [["category", "score"]]}
                """#
        ],
        properties: [
            "className": .init(reference: "ClassSettingsName"),
            "mergeRules": .init(
                "Merge rules by field name; fields not listed use the default rule.",
                constraints: [.keys("Identifier")]),
            "indexes": .init("""
                Compound indexes declared for the class (at most 8, none twice), each the fields it orders by. \
                Clients learn them when they pull objects of the class, and their local queries read them in \
                order. The fields they name are the only ones the server's SQLite storage keeps index rows of \
                (every field when the class declares none); conditions on other fields read the stored objects.
                """, items: "ClassIndex", constraints: [.maxItems(8), .uniqueItems])
        ])
}

extension ClassSettingsChange: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            A change of a class's settings: the members given replace the current ones, the others are kept (so a \
            `{className, permissions}` body changes permissions only). `className`, when given, must be the path's \
            class.
            """,
        examples: [
            #"{"permissions": {"delete": {}}, "mergeRules": {"score": "sum"}}"#
        ],
        recorded: [
            #"""
                {"className": "GameScore", "permissions": {"delete": {}}, "mergeRules": {"score": "sum"}, \#
                "indexes": [["team", "score"]]}
                """#
        ],
        properties: [
            "className": .init("""
                The class whose settings change: when given, it must be the path's class (else `400 illegalArgument`). \
                `null` is the same as absent.
                """, reference: "ClassSettingsName"),
            "permissions": .init("""
                The class's new permissions (each operation's rule, and the default ACL policy), replacing the \
                current ones whole. `null` is the same as absent.
                """),
            "mergeRules": .init("""
                Merge rules by field name; fields not listed use the default rule. `null` is the same as absent.
                """, constraints: [.keys("Identifier")]),
            "indexes": .init("""
                The class's declared indexes, replacing the current ones (at most 8, none twice). `null` is the \
                same as absent.
                """, items: "ClassIndex", constraints: [.maxItems(8), .uniqueItems])
        ])
}
