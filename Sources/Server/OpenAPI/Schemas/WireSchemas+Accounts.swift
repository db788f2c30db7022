import RooftopShared

extension UserList: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A page of users.",
        recorded: [
            #"{"users": [{"objectId": "u1", "username": "ada", "roles": []}], "next": "ada"}"#
        ],
        properties: [
            "users": .init("The users, in user-name order."),
            "next": .init("The `after` of the next page; absent on the last page.")
        ])
}

extension SessionInfo: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "One of a user's sessions (never its token).",
        recorded: [
            #"""
                {"id": "abababababababababababababababababababababababababababababababab", \#
                "createdAt": 1763779346123, "expiresAt": 1766371346123}
                """#
        ],
        properties: [
            "id": .init("The SHA-256 of the session's token, in hex.", constraints: [.pattern("^[0-9a-f]{64}$")])
        ])
}

extension SessionList: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A user's sessions, newest first.",
        recorded: [
            #"""
                {"sessions": [{"id": \#
                "abababababababababababababababababababababababababababababababab", "createdAt": \#
                1763779346123, "expiresAt": 1766371346123}]}
                """#
        ],
        properties: ["sessions": .init("The sessions, newest first.")])
}

extension RevokedSessions: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "How many sessions were ended.",
        recorded: [
            #"{"revoked": 2}"#
        ],
        properties: [
            "revoked": .init("The number of sessions ended.", constraints: [.minimum(0)])
        ])
}

extension SetPasswordRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A new password.",
        recorded: [
            #"{"password": "correct horse"}"#
        ],
        properties: [
            "password": .init("At least 8 characters, at most 1024 bytes.", constraints: [.minLength(8)])
        ])
}

extension SignUpRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A request to create an account and sign in.",
        examples: [
            #"{"username": "ada", "password": "correct horse", "email": "ada@example.com"}"#
        ],
        properties: [
            "username": .init("""
                1-128 UTF-8 bytes (also in NFC, the form it is stored in), no control characters, no leading or \
                trailing white space, at least one visible character. Compared with other names ignoring case, \
                Unicode form, width and invisible characters.
                """, constraints: [.maxLength(128), .minLength(1)]),
            "password": .init(
                "At least 8 characters, at most 1024 UTF-8 bytes.",
                constraints: [.minLength(8), .maxLength(1024)]),
            "email": .init(
                "An e-mail address. `null` is the same as absent.",
                constraints: [.format("email")])
        ])
}

extension LogInRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A request to sign in.",
        examples: [
            #"{"username": "ada", "password": "correct horse"}"#
        ],
        properties: [
            "username": .init("""
                The user name, or a name that differs from it only in case, Unicode form, width or invisible \
                characters.
                """),
            "password": .init("The password.")
        ])
}

extension Session: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            A signed-in session. The token is a secret: send it as `X-Rooftop-Session-Token` or `Authorization: \
            Bearer`.
            """,
        recorded: [
            #"""
                {"expiresAt": 1763779346123, "sessionToken": "r:9f8e", "user": {"createdAt": \#
                1763779346123, "email": "ada@example.com", "objectId": "u1", "roles": ["A", "B"], \#
                "username": "ada"}}
                """#
        ],
        properties: [
            "sessionToken": .init("The token for later requests."),
            "expiresAt": .init("When the token stops being accepted.")
        ])
}

extension UserInfo: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            A user: identity and effective roles (direct and through child roles), so that a client can evaluate \
            role ACLs offline.
            """,
        examples: [
            #"{"objectId": "u1", "username": "ada", "roles": ["Members"], "createdAt": 1763779346123}"#
        ],
        recorded: [
            #"""
                {"objectId": "u1", "username": "ada", "email": "ada@example.com", "roles": ["Members"], \#
                "createdAt": 1763779346123}
                """#
        ],
        properties: [
            "objectId": .init("The user's ID (the principal used in ACLs).", reference: "Identifier"),
            "username": .init("The user name, as signed up, in Unicode NFC."),
            "email": .init("The e-mail address, when known."),
            "roles": .init("Effective role names, sorted.", schema: """
                type: array
                items:
                  type: string
                  description: A role name.
                """),
            "createdAt": .init("When the account was created.")
        ])
}

extension RoleInfo: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            A role: its direct members, its child roles (whose members are members too) and who may read and \
            change it.
            """,
        examples: [
            #"""
                {"name": "Moderators", "users": ["u1", "u2"], "roles": ["Admins"], "acl": \#
                {"role:Admins": {"read": true, "write": true}}}
                """#
        ],
        properties: [
            "name": .init(
                "The name, used in principals as `role:Name`.",
                constraints: [.pattern("^[A-Za-z0-9._+/=-]{1,64}$")]),
            "users": .init("Users listed directly, sorted.", items: "Identifier"),
            "roles": .init("Child roles listed directly, sorted.", items: "Identifier"),
            "acl": .init("""
                Who may read and change the role. The reference server never sends it: only a role's creator and \
                the admin key may change a role.
                """)
        ])
}

extension CreateRoleRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A request to create a role. Needs a signed-in user or the admin key.",
        examples: [
            #"{"name": "Moderators", "users": ["u1"], "roles": ["Admins"]}"#
        ],
        properties: [
            "name": .init("The role's name.", constraints: [.pattern("^[A-Za-z0-9._+/=-]{1,64}$")]),
            "users": .init(
                "Users to list directly (default none). `null` is the same as absent.",
                items: "Identifier"),
            "roles": .init(
                "Child roles whose members join this role (default none). `null` is the same as absent.",
                items: "Identifier"),
            "acl": .init(
                "Accepted for compatibility; the server does not store it. `null` is the same as absent.")
        ])
}

extension UpdateRoleRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "A change to a role's direct members; every list is optional. Removals apply after additions.",
        examples: [
            #"{"addUsers": ["u3"], "removeUsers": ["u1"]}"#
        ],
        properties: [
            "addUsers": .init("Users to add. `null` is the same as absent.", items: "Identifier"),
            "removeUsers": .init(
                "Users to remove. `null` is the same as absent.",
                items: "Identifier"),
            "addRoles": .init(
                "Child roles to add. `null` is the same as absent.",
                items: "Identifier"),
            "removeRoles": .init(
                "Child roles to remove. `null` is the same as absent.",
                items: "Identifier")
        ])
}
