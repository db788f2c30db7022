import RooftopShared

/// Component schemas of access control (ACLs, class permissions, merge rules) and datastores
/// (information, sharing, creation).
extension OpenAPIDocument {
    static var securitySchemas: [(String, OpenAPIJSON)] {
        typealias S = OpenAPISchema
        return [
            (
                "ACL",
                S.map(
                    S.ref("ACLAccess"),
                    "An object's access control list (Parse's form): what each principal may do. A principal absent from the list has no access; an object without an ACL is readable and writable by everyone the class permissions let through.",
                    keys: S.ref("Principal")
                ).setting("examples", [["*": ["read": true], "u1": ["read": true, "write": true]]])
            ),
            (
                "ACLAccess",
                S.object(
                    "What one principal may do; a missing flag is `false`. The server writes only `true` flags.",
                    required: [],
                    properties: [
                        "read": S.boolean("May read (get, find, pull)."),
                        "write": S.boolean("May write (update, delete)."),
                    ])
            ),
            (
                "PermissionRule",
                S.map(
                    S.boolean("`true` to allow; `false` entries are ignored."),
                    "Who may perform one operation on a class (Parse's form): principals as keys (`*` for everyone), plus `requiresAuthentication` to let every signed-in user through. `{}` lets nobody but the admin key through.",
                    keys: ["anyOf": [S.ref("Principal"), S.constant("requiresAuthentication")]]
                ).setting("examples", [["*": true], ["role:Admins": true, "requiresAuthentication": true], [:]])
            ),
            (
                "DefaultACL",
                S.oneOf(
                    "The ACL a new object gets when its creator sends none.",
                    [
                        S.object(
                            "A built-in policy.", required: ["policy"],
                            properties: [
                                "policy": S.enumeration(
                                    ["creatorOnly", "publicReadCreatorWrite", "publicReadWrite"],
                                    "`creatorOnly` (the default): only the creator reads and writes; `publicReadCreatorWrite`: everyone reads, the creator writes; `publicReadWrite`: everyone reads and writes. An anonymous creator gets no entry; when nothing would be left, the create is refused with `disallowed`."
                                )
                            ]),
                        S.object(
                            "An explicit ACL.", required: ["policy", "acl"],
                            properties: ["policy": S.constant("explicit"), "acl": S.ref("ACL")]),
                    ],
                    examples: [["policy": "creatorOnly"], ["policy": "explicit", "acl": ["role:Staff": ["read": true]]]])
            ),
            ("ClassPermissions", classPermissionsSchema),
            (
                "MergeRule",
                S.enumeration(
                    MergeRule.allCases.map(\.rawValue),
                    "How concurrent changes to one field are merged: `remote` (the stored value wins; the default), `local` (the incoming change wins), `max` / `min` (the larger / smaller in the value order; present beats absent), `sum` (numbers: the incoming change counts as a difference, so concurrent increments add up; otherwise as `remote`).")
            ),
            (
                "ClassSettings",
                S.object(
                    "A class's settings: permissions and per-field merge rules.",
                    required: ["className", "permissions", "mergeRules"],
                    properties: [
                        "className": S.ref("Identifier"),
                        "permissions": S.ref("ClassPermissions"),
                        "mergeRules": S.map(
                            S.ref("MergeRule"), "Merge rules by field name; fields not listed use the default rule.",
                            keys: S.ref("Identifier")),
                    ],
                    examples: [
                        ["className": "GameScore", "permissions": ["delete": [:]], "mergeRules": ["score": "sum"]]
                    ])
            ),
            (
                "ClassSettingsBody",
                S.object(
                    "A change of a class's settings: the members given replace the current ones, the others are kept (so a `{className, permissions}` body changes permissions only). `className`, when given, must be the path's class.",
                    required: [],
                    properties: [
                        "className": S.ref("Identifier"),
                        "permissions": S.ref("ClassPermissions"),
                        "mergeRules": S.map(
                            S.ref("MergeRule"), "Merge rules by field name; fields not listed use the default rule.",
                            keys: S.ref("Identifier")),
                    ],
                    examples: [["permissions": ["delete": [:]], "mergeRules": ["score": "sum"]]])
            ),
            (
                "SharingRole",
                S.enumeration(
                    ["none", "viewer", "editor", "owner"],
                    "A role on a datastore, ordered `none < viewer < editor < owner`: `viewer` reads (get, find, count, pull), `editor` reads, writes and changes sharing roles, `owner` (the creator) is an editor that cannot be removed and alone may delete the datastore. Setting `none` removes a principal's role; `owner` is never assigned.")
            ),
            (
                "DatastoreSharing",
                S.object(
                    "Who may use a datastore. `roles` never holds `none` or the owner.", required: ["datastore", "roles"],
                    properties: [
                        "datastore": S.ref("DatastoreID"),
                        "owner": S.ref("Identifier", "The owner's user ID; absent for `:app`."),
                        "roles": S.map(S.ref("SharingRole"), "Roles by principal.", keys: S.ref("Principal")),
                    ],
                    examples: [["datastore": ".Xy3", "owner": "u1", "roles": ["*": "viewer", "role:Team": "editor"]]])
            ),
            ("DatastoreInfo", datastoreInfoSchema),
            (
                "DatastoreList",
                S.object(
                    "The datastores the caller can use.", required: ["datastores"],
                    properties: ["datastores": S.array(S.ref("DatastoreInfo"), "The datastores.")])
            ),
            (
                "CreateDatastoreRequest",
                S.object(
                    "A request to create a shareable datastore; the server chooses its ID and the caller becomes its owner.",
                    required: [],
                    properties: [
                        "title": S.string(
                            "A title for people, at most \(CreateDatastoreRequest.maxTitleBytes) UTF-8 bytes.",
                            maxLength: CreateDatastoreRequest.maxTitleBytes)
                    ],
                    examples: [["title": "Trip plan"]])
            ),
            (
                "SetRoleRequest",
                S.object(
                    "A request to give a principal a role on a shareable datastore (`none` removes it).",
                    required: ["principal", "role"],
                    properties: ["principal": S.ref("Principal"), "role": S.ref("SharingRole")],
                    examples: [["principal": "role:Team", "role": "editor"]])
            ),
        ]
    }

    private static var classPermissionsSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        func rule(_ what: String) -> OpenAPIJSON {
            S.ref("PermissionRule", "Who may \(what). Missing: everyone (`{\"*\": true}`).")
        }
        return S.object(
            "Class-level permissions (checked before object ACLs; both must allow an operation) and the default ACL of new objects. The server always writes all seven members.",
            required: [],
            properties: [
                "get": rule("read one object by ID"),
                "find": rule("query, pull and be notified about objects"),
                "count": rule("count objects"),
                "create": rule("create objects"),
                "update": rule("change existing objects"),
                "delete": rule("delete objects"),
                "defaultACL": S.ref("DefaultACL", "Missing: `creatorOnly`."),
            ])
    }

    private static var datastoreInfoSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "What a caller learns about a datastore.", required: ["id", "kind", "role"],
            properties: [
                "id": S.ref("DatastoreID"),
                "kind": S.ref("DatastoreKind"),
                "title": S.string("A title for people, when one is set."),
                "owner": S.ref("Identifier", "The owner's user ID; absent for `:app`."),
                "role": S.ref("SharingRole", "The caller's effective role."),
                "updatedAt": S.ref("Timestamp", "When the datastore last changed, when known."),
            ],
            examples: [
                ["id": ".Xy3", "kind": "shareable", "title": "Trip plan", "owner": "u1", "role": "editor", "updatedAt": 1_763_779_346_123]
            ])
    }
}
