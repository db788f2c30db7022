extension API {
    // MARK: Classes: Class permissions, merge rules and indexes.

    /// `GET /v1/classes/{className}`: Read a class's settings.
    public static let getClassSettings = APIEndpoint<NoBody, ClassSettings>(
        .get, "/v1/classes/{className}",
        id: "getClassSettings", tag: .classes, access: .application,
        summary: "Read a class's settings",
        details: """
            The class's permissions and merge rules (the defaults for a class never configured). The reserved class \
            `:Role` holds no objects; its `create` permission says who may create roles (by default nobody but the \
            admin key).
            """,
        parameters: ["ClassSettingsName"],
        answer: "The settings.",
        errors: [.badRequest, .unauthorized] + APIOperation.ErrorAnswer.always)

    /// `PUT /v1/classes/{className}`: Change a class's settings.
    public static let putClassSettings = APIEndpoint<ClassSettingsChange, ClassSettings>(
        .put, "/v1/classes/{className}",
        id: "putClassSettings", tag: .classes, access: .admin,
        summary: "Change a class's settings",
        details: """
            Replaces the class's permissions and/or merge rules with those in the body; members left out keep their \
            values. Admin key only.
            """,
        parameters: ["ClassSettingsName"],
        body: "The settings to change.",
        answer: "The settings as saved.",
        errors: [.badRequest, .unauthorized, .forbidden, .contentTooLarge] + APIOperation.ErrorAnswer.always)
}
