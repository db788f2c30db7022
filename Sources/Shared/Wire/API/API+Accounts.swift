extension API {
    // MARK: Accounts: Sign-up, log-in, sessions, users (admin) and roles.

    /// `POST /v1/users`: Sign up.
    public static let signUp = APIEndpoint<SignUpRequest, Session>(
        .post, "/v1/users",
        id: "signUp", tag: .accounts, access: .application,
        summary: "Sign up",
        details: """
            Creates an account and signs it in. The user name is stored as typed, in Unicode NFC. User names are \
            compared by a key that ignores case, Unicode form, width (fullwidth letters, ligatures) and invisible \
            characters (soft hyphens, zero-width spaces), so a name that differs from a taken one only in those is \
            taken (`409 exists`).
            """,
        body: "The new account.",
        status: 201,
        answer: "The account was created; its session.",
        errors: [.badRequest, .unauthorized, .conflict, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/users`: List users.
    public static let listUsers = APIEndpoint<NoBody, UserList>(
        .get, "/v1/users",
        id: "listUsers", tag: .accounts, access: .admin,
        summary: "List users",
        details: "Users in user-name order (by UTF-8 bytes), a page at a time. Admin key only.",
        parameters: ["UserAfter", "UserLimit"],
        answer: "A page of users.",
        errors: [.badRequest, .unauthorized, .forbidden] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/users/{userId}`: Read a user.
    public static let getUser = APIEndpoint<NoBody, UserInfo>(
        .get, "/v1/users/{userId}",
        id: "getUser", tag: .accounts, access: .admin,
        summary: "Read a user",
        details: "A user with their effective roles. Admin key only.",
        parameters: ["UserId"],
        answer: "The user.",
        errors: [.unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `PUT /v1/users/{userId}/password`: Set a user's password.
    public static let setUserPassword = APIEndpoint<SetPasswordRequest, NoBody>(
        .put, "/v1/users/{userId}/password",
        id: "setUserPassword", tag: .accounts, access: .admin,
        summary: "Set a user's password",
        details: "Replaces a user's password and ends all their sessions. Admin key only.",
        parameters: ["UserId"],
        body: "The new password.",
        status: 204,
        answer: "The password was set; the user's sessions ended.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/users/{userId}/sessions`: A user's sessions.
    public static let listUserSessions = APIEndpoint<NoBody, SessionList>(
        .get, "/v1/users/{userId}/sessions",
        id: "listUserSessions", tag: .accounts, access: .admin,
        summary: "A user's sessions",
        details: "A user's sessions, newest first (never their tokens). Admin key only.",
        parameters: ["UserId"],
        answer: "The sessions.",
        errors: [.unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `DELETE /v1/users/{userId}/sessions`: End a user's sessions.
    public static let revokeUserSessions = APIEndpoint<NoBody, RevokedSessions>(
        .delete, "/v1/users/{userId}/sessions",
        id: "revokeUserSessions", tag: .accounts, access: .admin,
        summary: "End a user's sessions",
        details: """
            Ends all of a user's sessions, in every server process; their live connections stop hearing of changes. \
            Admin key only.
            """,
        parameters: ["UserId"],
        answer: "How many sessions were ended.",
        errors: [.unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `POST /v1/login`: Log in.
    public static let logIn = APIEndpoint<LogInRequest, Session>(
        .post, "/v1/login",
        id: "logIn", tag: .accounts, access: .application,
        summary: "Log in",
        details: """
            Signs in with a user name and password. The user name is checked as at sign-up (`400 illegalArgument`). \
            The account is found under any name with the same key (`Alice` logs in to `alice`; the user named exactly \
            as typed first). Repeated failures for one user name (by its key) from one address, or from one address, \
            are refused (`429 retryLater`); for a user name from many addresses the answer is only delayed (up to 4 \
            s).
            """,
        body: "The credentials.",
        answer: "The new session.",
        errors: [.badRequest, .unauthorized, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `POST /v1/logout`: Log out.
    public static let logOut = APIEndpoint<NoBody, NoBody>(
        .post, "/v1/logout",
        id: "logOut", tag: .accounts, access: .signedIn,
        summary: "Log out",
        details: "Revokes the session whose token the request carries.",
        status: 204,
        answer: "The session was revoked.",
        errors: [.unauthorized] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/users/me`: The signed-in user.
    public static let getCurrentUser = APIEndpoint<NoBody, UserInfo>(
        .get, "/v1/users/me",
        id: "getCurrentUser", tag: .accounts, access: .signedIn,
        summary: "The signed-in user",
        details: "The signed-in user, with their effective roles.",
        answer: "The user.",
        errors: [.unauthorized] + APIOperation.ErrorAnswer.always)

    /// `POST /v1/roles`: Create a role.
    public static let createRole = APIEndpoint<CreateRoleRequest, RoleInfo>(
        .post, "/v1/roles",
        id: "createRole", tag: .accounts, access: .application,
        summary: "Create a role",
        details: """
            Creates a role with the request's ACL; without one, only its creator may read and change it (only admins, \
            when the admin key created it). Needs the admin key, or a signed-in user allowed by the `create` \
            permission of the reserved class `:Role` (`PUT /v1/classes/:Role`; nobody by default), else 403 \
            `disallowed`. The name of a deleted role stays reserved (409 `exists`), so that no new role inherits the \
            grants that name it. `users` and `roles` hold at most 1,000 names each, and no user may come to hold more \
            than 1,000 roles; either is refused with 413 `sizeLimit`.
            """,
        body: "The role.",
        status: 201,
        answer: "The role.",
        errors: [.badRequest, .unauthorized, .forbidden, .conflict, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/roles/{name}`: Read a role.
    public static let getRole = APIEndpoint<NoBody, RoleInfo>(
        .get, "/v1/roles/{name}",
        id: "getRole", tag: .accounts, access: .application,
        summary: "Read a role",
        details: """
            A role, its direct members and its ACL, for callers the role's ACL lets read it (and admins); others get \
            404.
            """,
        parameters: ["RoleName"],
        answer: "The role.",
        errors: [.unauthorized, .notFound] + APIOperation.ErrorAnswer.always)

    /// `PATCH /v1/roles/{name}`: Change a role's members.
    public static let updateRole = APIEndpoint<UpdateRoleRequest, RoleInfo>(
        .patch, "/v1/roles/{name}",
        id: "updateRole", tag: .accounts, access: .application,
        summary: "Change a role's members",
        details: """
            Adds and removes direct users and child roles. Needs write access by the role's ACL, or the admin key. \
            Each list holds at most 1,000 names, and no user may come to hold more than 1,000 roles (directly or \
            through child roles); either is refused with 413 `sizeLimit`, changing nothing.
            """,
        parameters: ["RoleName"],
        body: "The change.",
        answer: "The role after the change.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `DELETE /v1/roles/{name}`: Delete a role.
    public static let deleteRole = APIEndpoint<NoBody, NoBody>(
        .delete, "/v1/roles/{name}",
        id: "deleteRole", tag: .accounts, access: .application,
        summary: "Delete a role",
        details: """
            Deletes a role. Needs write access by the role's ACL, or the admin key. Its name stays reserved; grants \
            naming it are left in place, and no role can be created with that name again.
            """,
        parameters: ["RoleName"],
        status: 204,
        answer: "The role was deleted.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)
}
