import HTTPTypes
import RooftopShared

/// Component schemas of accounts, roles, class settings, server information and errors.
extension OpenAPIDocument {
    static var accountSchemas: [(String, OpenAPIJSON)] {
        typealias S = OpenAPISchema
        return [
            (
                "SignUpRequest",
                S.object(
                    "A request to create an account and sign in.", required: ["username", "password"],
                    properties: [
                        "username": S.string(
                            "1-\(SignUpRequest.maxUsernameBytes) UTF-8 bytes, no control characters, no leading or trailing white space.",
                            maxLength: SignUpRequest.maxUsernameBytes),
                        "password": S.string(
                            "At least \(SignUpRequest.minPasswordLength) characters, at most \(SignUpRequest.maxPasswordBytes) UTF-8 bytes."
                        ),
                        "email": S.string("An e-mail address.", format: "email"),
                    ],
                    examples: [["username": "ada", "password": "correct horse", "email": "ada@example.com"]])
            ),
            (
                "LogInRequest",
                S.object(
                    "A request to sign in.", required: ["username", "password"],
                    properties: ["username": S.string("The user name."), "password": S.string("The password.")],
                    examples: [["username": "ada", "password": "correct horse"]])
            ),
            (
                "Session",
                S.object(
                    "A signed-in session. The token is a secret: send it as `X-Rooftop-Session-Token` or `Authorization: Bearer`.",
                    required: ["user", "sessionToken", "expiresAt"],
                    properties: [
                        "user": S.ref("UserInfo"),
                        "sessionToken": S.string("The token for later requests."),
                        "expiresAt": S.ref("Timestamp", "When the token stops being accepted."),
                    ])
            ),
            (
                "UserInfo",
                S.object(
                    "A user: identity and effective roles (direct and through child roles), so that a client can evaluate role ACLs offline.",
                    required: ["objectId", "username", "roles"],
                    properties: [
                        "objectId": S.ref("Identifier", "The user's ID (the principal used in ACLs)."),
                        "username": S.string("The user name."),
                        "email": S.string("The e-mail address, when known."),
                        "roles": S.array(S.string("A role name."), "Effective role names, sorted."),
                        "createdAt": S.ref("Timestamp", "When the account was created."),
                    ],
                    examples: [["objectId": "u1", "username": "ada", "roles": ["Members"], "createdAt": 1_763_779_346_123]])
            ),
            ("RoleInfo", roleInfoSchema),
            (
                "CreateRoleRequest",
                S.object(
                    "A request to create a role. Needs a signed-in user or the admin key.", required: ["name"],
                    properties: [
                        "name": S.string("The role's name.", pattern: unreservedIdentifierPattern),
                        "users": S.array(S.ref("Identifier"), "Users to list directly (default none)."),
                        "roles": S.array(S.ref("Identifier"), "Child roles whose members join this role (default none)."),
                        "acl": S.ref("ACL", "Accepted for compatibility; the server does not store it."),
                    ],
                    examples: [["name": "Moderators", "users": ["u1"], "roles": ["Admins"]]])
            ),
            (
                "UpdateRoleRequest",
                S.object(
                    "A change to a role's direct members; every list is optional. Removals apply after additions.",
                    required: [],
                    properties: [
                        "addUsers": S.array(S.ref("Identifier"), "Users to add."),
                        "removeUsers": S.array(S.ref("Identifier"), "Users to remove."),
                        "addRoles": S.array(S.ref("Identifier"), "Child roles to add."),
                        "removeRoles": S.array(S.ref("Identifier"), "Child roles to remove."),
                    ],
                    examples: [["addUsers": ["u3"], "removeUsers": ["u1"]]])
            ),
            ("ServerInfo", serverInfoSchema),
            ("Limits", limitsSchema),
            (
                "HealthStatus",
                S.object(
                    "The server is up.", required: ["status", "version"],
                    properties: [
                        "status": S.constant("ok"), "version": S.string("The server's software version."),
                    ])
            ),
            ("Error", errorSchema),
        ]
    }

    private static var roleInfoSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "A role: its direct members, its child roles (whose members are members too) and who may read and change it.",
            required: ["name", "users", "roles"],
            properties: [
                "name": S.string("The name, used in principals as `role:Name`.", pattern: unreservedIdentifierPattern),
                "users": S.array(S.ref("Identifier"), "Users listed directly, sorted."),
                "roles": S.array(S.ref("Identifier"), "Child roles listed directly, sorted."),
                "acl": S.ref("ACL", "Who may read and change the role. The reference server never sends it: only a role's creator and the admin key may change a role."),
            ],
            examples: [
                ["name": "Moderators", "users": ["u1", "u2"], "roles": ["Admins"], "acl": ["role:Admins": ["read": true, "write": true]]]
            ])
    }

    private static var serverInfoSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "What the server says about itself.", required: ["version", "protocolVersion", "limits"],
            properties: [
                "version": S.string("The server's software version."),
                "protocolVersion": S.integer(
                    "The wire protocol version (\(ServerInfo.currentProtocolVersion) for this server)."),
                "limits": S.ref("Limits"),
            ])
    }

    private static var limitsSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        let limits = Limits.default
        func limit(_ description: String, _ value: Int) -> OpenAPIJSON {
            S.integer("\(description) Default \(value).", minimum: 1)
        }
        return S.object(
            "The limits the server enforces, so that clients can check sizes before queueing a change.",
            required: [
                "maxRecordBytes", "maxRecordsPerDatastore", "maxDatastoreBytes", "maxPushBytes", "maxRequestBodyBytes",
                "maxNestingDepth", "maxQueryLimit", "defaultQueryLimit", "maxMutationsPerPush", "maxPullPageSize",
                "defaultPullPageSize", "maxPullPageBytes",
            ],
            properties: [
                "maxRecordBytes": limit("The largest object, in bytes.", limits.maxRecordBytes),
                "maxRecordsPerDatastore": limit("The most objects in one datastore.", limits.maxRecordsPerDatastore),
                "maxDatastoreBytes": limit("The largest datastore, in bytes.", limits.maxDatastoreBytes),
                "maxPushBytes": limit("The largest push, in bytes.", limits.maxPushBytes),
                "maxRequestBodyBytes": limit("The largest request body, in bytes.", limits.maxRequestBodyBytes),
                "maxNestingDepth": limit("The deepest nesting of lists and JSON in a value.", limits.maxNestingDepth),
                "maxQueryLimit": limit("The largest query `limit`.", limits.maxQueryLimit),
                "defaultQueryLimit": limit("The query `limit` when none is given.", limits.defaultQueryLimit),
                "maxMutationsPerPush": limit("The most mutations in one push.", limits.maxMutationsPerPush),
                "maxPullPageSize": limit("The largest pull `limit`.", limits.maxPullPageSize),
                "defaultPullPageSize": limit("The pull `limit` when none is given.", limits.defaultPullPageSize),
                "maxPullPageBytes": limit("The largest pull page, in bytes.", limits.maxPullPageBytes),
            ])
    }

    /// The error codes the server sends, with the HTTP status each is answered with (computed from
    /// the same mapping the error middleware uses, so the table cannot drift).
    static let serverErrorCodes: [RooftopError.Code] = [
        .request, .illegalArgument, .badType, .badIndex, .invalidQuery, .invalidOperation, .badState, .auth,
        .disallowed, .quota, .notFound, .deleted, .exists, .alreadyOpen, .sizeLimit, .retryLater, .server,
        .internal,
    ]

    private static var errorSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        let table = serverErrorCodes.map { code in
            "| `\(code.rawValue)` | \(RooftopError(code, "").httpStatus.code) |"
        }
        let description = (
            [
                "Every error response has this body. `code` is stable and what clients switch on; new codes may appear, so treat unknown ones as failures of the request. The HTTP status follows the code:",
                "",
                "| code | status |",
                "|---|---|",
            ] + table
        ).joined(separator: "\n")
        return S.object(
            description, required: ["code", "message"],
            properties: [
                "code": S.string(
                    "The error code.", examples: .init(serverErrorCodes.map { OpenAPIJSON.string($0.rawValue) })),
                "message": S.string("What went wrong, for people."),
                "field": S.string("The field or member concerned, when one is."),
                "position": S.integer("The offset in a query text where parsing failed."),
            ],
            examples: [["code": "notFound", "message": "no GameScore object abc"]])
    }
}
