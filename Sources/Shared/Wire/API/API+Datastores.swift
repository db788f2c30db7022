extension API {
    // MARK: Datastores: Listing, opening, creating, sharing and deleting datastores.

    /// `GET /v1/datastores`: List datastores.
    public static let listDatastores = APIEndpoint<NoBody, DatastoreList>(
        .get, "/v1/datastores",
        id: "listDatastores", tag: .datastores, access: .application,
        summary: "List datastores",
        details: """
            The datastores the signed-in caller owns or has a role on (empty for anonymous callers).
            """,
        answer: "The datastores.",
        errors: [.unauthorized] + APIOperation.ErrorAnswer.always)

    /// `POST /v1/datastores`: Create a shareable datastore.
    public static let createDatastore = APIEndpoint<CreateDatastoreRequest, DatastoreInfo>(
        .post, "/v1/datastores",
        id: "createDatastore", tag: .datastores, access: .application,
        summary: "Create a shareable datastore",
        details: """
            Creates a shareable datastore with a server-chosen ID, owned by the signed-in caller.
            """,
        body: "The title.",
        status: 201,
        answer: "The new datastore.",
        errors: [.badRequest, .unauthorized, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `PUT /v1/datastores/{datastore}`: Open or create.
    public static let openDatastore = APIEndpoint<NoBody, DatastoreInfo>(
        .put, "/v1/datastores/{datastore}",
        id: "openDatastore", tag: .datastores, access: .application,
        summary: "Open or create",
        details: """
            Opens a datastore, creating a private datastore (or `:app`) that does not exist yet. Shareable datastores \
            are never created here. Private datastores need a signed-in user.
            """,
        parameters: ["Datastore"],
        answer: "The datastore.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/datastores/{datastore}`: Open.
    public static let getDatastore = APIEndpoint<NoBody, DatastoreInfo>(
        .get, "/v1/datastores/{datastore}",
        id: "getDatastore", tag: .datastores, access: .application,
        summary: "Open",
        details: "A datastore the caller has a role on; one without is answered as missing.",
        parameters: ["Datastore"],
        answer: "The datastore.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `DELETE /v1/datastores/{datastore}`: Delete.
    public static let deleteDatastore = APIEndpoint<NoBody, NoBody>(
        .delete, "/v1/datastores/{datastore}",
        id: "deleteDatastore", tag: .datastores, access: .application,
        summary: "Delete",
        details: """
            Deletes a datastore and everything in it. Its owner or the admin key only; `:app` cannot be deleted.
            """,
        parameters: ["Datastore"],
        status: 204,
        answer: "The datastore was deleted.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/datastores/{datastore}/roles`: Sharing roles.
    public static let getDatastoreSharing = APIEndpoint<NoBody, DatastoreSharing>(
        .get, "/v1/datastores/{datastore}/roles",
        id: "getDatastoreSharing", tag: .datastores, access: .application,
        summary: "Sharing roles",
        details: "The datastore's owner and the roles given to principals.",
        parameters: ["Datastore"],
        answer: "The sharing state.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `PUT /v1/datastores/{datastore}/roles`: Share.
    public static let setDatastoreRole = APIEndpoint<SetRoleRequest, DatastoreInfo>(
        .put, "/v1/datastores/{datastore}/roles",
        id: "setDatastoreRole", tag: .datastores, access: .application,
        summary: "Share",
        details: """
            Gives a principal a role on a shareable datastore, or removes it with `none`. Editors and the owner may; \
            the owner's own role is fixed.
            """,
        parameters: ["Datastore"],
        body: "The principal and role.",
        answer: "The datastore, with the caller's role.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge] + APIOperation.ErrorAnswer.always)
}
