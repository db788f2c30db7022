extension API {
    // MARK: Objects: Objects over REST: writes, reads, queries.

    /// `POST /v1/datastores/{datastore}/classes/{className}/objects`: Create an object.
    public static let createObject = APIEndpoint<ObjectWriteBody, WriteResponse>(
        .post, "/v1/datastores/{datastore}/classes/{className}/objects",
        id: "createObject", tag: .objects, access: .application,
        summary: "Create an object",
        details: """
            Creates an object with the body's fields and updates (not idempotent: use push for retries); `exists` \
            (409) when an object with that ID exists and the caller may read it; `disallowed` (403) when it exists and \
            the caller may not read it, as for any create the caller may not make. The ACL defaults to the class's \
            default ACL.
            """,
        parameters: ["Datastore", "ClassName"],
        body: "The fields, updates and ACL.",
        status: 201,
        answer: "The object was written.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .conflict, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/datastores/{datastore}/classes/{className}/objects/{objectId}`: Read an object.
    public static let getObject = APIEndpoint<NoBody, ObjectWithIncludes>(
        .get, "/v1/datastores/{datastore}/classes/{className}/objects/{objectId}",
        id: "getObject", tag: .objects, access: .application,
        summary: "Read an object",
        details: """
            One object, with the readable objects its `include` paths point to. An object the caller may not read is \
            answered as missing.
            """,
        parameters: ["Datastore", "ClassName", "ObjectId", "Include"],
        answer: "The object.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `PATCH /v1/datastores/{datastore}/classes/{className}/objects/{objectId}`: Update an object.
    public static let updateObject = APIEndpoint<ObjectWriteBody, WriteResponse>(
        .patch, "/v1/datastores/{datastore}/classes/{className}/objects/{objectId}",
        id: "updateObject", tag: .objects, access: .application,
        summary: "Update an object",
        details: """
            Applies the body's fields and updates. With `baseVersion`, changes committed since are merged with the \
            class's merge rules; without, the write applies over what is stored.
            """,
        parameters: ["Datastore", "ClassName", "ObjectId"],
        body: "The fields, updates, ACL and base version.",
        answer: "The object was written.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `DELETE /v1/datastores/{datastore}/classes/{className}/objects/{objectId}`: Delete an object.
    public static let deleteObject = APIEndpoint<NoBody, NoBody>(
        .delete, "/v1/datastores/{datastore}/classes/{className}/objects/{objectId}",
        id: "deleteObject", tag: .objects, access: .application,
        summary: "Delete an object",
        details: "Deletes an object.",
        parameters: ["Datastore", "ClassName", "ObjectId"],
        status: 204,
        answer: "The object was deleted.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/datastores/{datastore}/classes/{className}/objects/{objectId}/operations`: An object's changes since a version.
    public static let listObjectOperations = APIEndpoint<NoBody, OperationList>(
        .get, "/v1/datastores/{datastore}/classes/{className}/objects/{objectId}/operations",
        id: "listObjectOperations", tag: .objects, access: .application,
        summary: "An object's changes since a version",
        details: """
            The committed changes that produced versions after `after` through the object's current version, oldest \
            first, for clients rebasing pending changes. Needs read access to the object. Only the object's current \
            incarnation is answered, and only when the caller could read all of it - otherwise 410 `historyExpired`, \
            and the client reads the object again instead of rebasing - namely when `after` is older than the history \
            kept, when it is from before the object ID was last deleted and created again (anyone who may create \
            objects of the class may re-create a deleted ID, as any unused one; the new object shares nothing with the \
            old), or when a change after it set the object's ACL (the caller may not have been able to read what was \
            written before). The admin key is refused only the first two.
            """,
        parameters: ["Datastore", "ClassName", "ObjectId", "After"],
        answer: "The changes.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .gone] + APIOperation.ErrorAnswer.always)

    /// `POST /v1/datastores/{datastore}/query`: Query.
    public static let queryObjects = APIEndpoint<QueryRequest, QueryResult>(
        .post, "/v1/datastores/{datastore}/query",
        id: "queryObjects", tag: .objects, access: .application,
        summary: "Query",
        details: """
            One page of the readable objects a query matches, their total count and the included objects.
            """,
        parameters: ["Datastore"],
        body: "The query.",
        answer: "The page.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `POST /v1/datastores/{datastore}/count`: Count.
    public static let countObjects = APIEndpoint<QueryRequest, CountResponse>(
        .post, "/v1/datastores/{datastore}/count",
        id: "countObjects", tag: .objects, access: .application,
        summary: "Count",
        details: "How many readable objects a query matches (`limit` and `offset` are ignored).",
        parameters: ["Datastore"],
        body: "The query.",
        answer: "The count.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `POST /v1/datastores/{datastore}/remove`: Delete by query.
    public static let removeObjects = APIEndpoint<RemoveRequest, RemoveResponse>(
        .post, "/v1/datastores/{datastore}/remove",
        id: "removeObjects", tag: .objects, access: .application,
        summary: "Delete by query",
        details: """
            Deletes the objects a query matches, in its order; objects the caller may read but not delete are skipped.
            """,
        parameters: ["Datastore"],
        body: "The query and limit.",
        answer: "How many were deleted.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge] + APIOperation.ErrorAnswer.always)
}
