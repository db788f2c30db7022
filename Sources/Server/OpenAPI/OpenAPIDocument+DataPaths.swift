/// The datastore, object, query and sync endpoints (`DatastoreRoutes.swift`, `ObjectRoutes.swift`,
/// `SyncRoutes.swift`) and the live WebSocket (`LiveEndpoint.swift`).
extension OpenAPIDocument {
    static var datastoreOperations: [OpenAPIOperation] {
        let datastore = "/v1/datastores/{datastore}"
        let failures: [OpenAPIOperation.Failure] = [.badRequest, .unauthorized, .forbidden, .notFound, .internalError]
        return [
            OpenAPIOperation(
                "get", "/v1/datastores", id: "listDatastores", tag: "Datastores", summary: "List datastores",
                description: "The datastores the signed-in caller owns or has a role on (empty for anonymous callers).",
                access: .anyCaller, success: .init(200, "The datastores.", schema: "DatastoreList"),
                failures: [.unauthorized, .internalError]),
            OpenAPIOperation(
                "post", "/v1/datastores", id: "createDatastore", tag: "Datastores",
                summary: "Create a shareable datastore",
                description: "Creates a shareable datastore with a server-chosen ID, owned by the signed-in caller.",
                access: .anyCaller, body: ("CreateDatastoreRequest", "The title."),
                success: .init(201, "The new datastore.", schema: "DatastoreInfo"),
                failures: [.badRequest, .unauthorized, .contentTooLarge, .internalError]),
            OpenAPIOperation(
                "put", datastore, id: "openDatastore", tag: "Datastores", summary: "Open or create",
                description: "Opens a datastore, creating a private datastore (or `:app`) that does not exist yet. Shareable datastores are never created here. Private datastores need a signed-in user.",
                access: .anyCaller, parameters: ["Datastore"],
                success: .init(200, "The datastore.", schema: "DatastoreInfo"), failures: failures),
            OpenAPIOperation(
                "get", datastore, id: "getDatastore", tag: "Datastores", summary: "Open",
                description: "A datastore the caller has a role on; one without is answered as missing.",
                access: .anyCaller, parameters: ["Datastore"],
                success: .init(200, "The datastore.", schema: "DatastoreInfo"), failures: failures),
            OpenAPIOperation(
                "delete", datastore, id: "deleteDatastore", tag: "Datastores", summary: "Delete",
                description: "Deletes a datastore and everything in it. Its owner or the admin key only; `:app` cannot be deleted.",
                access: .anyCaller, parameters: ["Datastore"], success: .init(204, "The datastore was deleted."),
                failures: failures),
            OpenAPIOperation(
                "get", "\(datastore)/roles", id: "getDatastoreSharing", tag: "Datastores", summary: "Sharing roles",
                description: "The datastore's owner and the roles given to principals.", access: .anyCaller,
                parameters: ["Datastore"], success: .init(200, "The sharing state.", schema: "DatastoreSharing"),
                failures: failures),
            OpenAPIOperation(
                "put", "\(datastore)/roles", id: "setDatastoreRole", tag: "Datastores", summary: "Share",
                description: "Gives a principal a role on a shareable datastore, or removes it with `none`. Editors and the owner may; the owner's own role is fixed.",
                access: .anyCaller, parameters: ["Datastore"], body: ("SetRoleRequest", "The principal and role."),
                success: .init(200, "The datastore, with the caller's role.", schema: "DatastoreInfo"),
                failures: failures + [.contentTooLarge]),
        ]
    }

    static var objectOperations: [OpenAPIOperation] {
        let objects = "/v1/datastores/{datastore}/classes/{className}/objects"
        let object = "\(objects)/{objectId}"
        let reads: [OpenAPIOperation.Failure] = [.badRequest, .unauthorized, .forbidden, .notFound, .internalError]
        let writes = reads + [.contentTooLarge]
        let inClass = ["Datastore", "ClassName"]
        return [
            OpenAPIOperation(
                "post", objects, id: "createObject", tag: "Objects", summary: "Create an object",
                description: "Creates an object with the body's fields and updates (not idempotent: use push for retries); `exists` (409) when an object with that ID exists. The ACL defaults to the class's default ACL.",
                access: .anyCaller, parameters: inClass, body: ("ObjectWriteBody", "The fields, updates and ACL."),
                success: .init(201, "The object was written.", schema: "WriteResponse"), failures: writes + [.conflict]),
            OpenAPIOperation(
                "get", object, id: "getObject", tag: "Objects", summary: "Read an object",
                description: "One object, with the readable objects its `include` paths point to. An object the caller may not read is answered as missing.",
                access: .anyCaller, parameters: inClass + ["ObjectId", "Include"],
                success: .init(200, "The object.", schema: "ObjectWithIncludes"), failures: reads),
            OpenAPIOperation(
                "patch", object, id: "updateObject", tag: "Objects", summary: "Update an object",
                description: "Applies the body's fields and updates. With `baseVersion`, changes committed since are merged with the class's merge rules; without, the write applies over what is stored.",
                access: .anyCaller, parameters: inClass + ["ObjectId"],
                body: ("ObjectWriteBody", "The fields, updates, ACL and base version."),
                success: .init(200, "The object was written.", schema: "WriteResponse"), failures: writes),
            OpenAPIOperation(
                "delete", object, id: "deleteObject", tag: "Objects", summary: "Delete an object",
                description: "Deletes an object.", access: .anyCaller, parameters: inClass + ["ObjectId"],
                success: .init(204, "The object was deleted."), failures: reads),
            OpenAPIOperation(
                "get", "\(object)/operations", id: "listObjectOperations", tag: "Objects",
                summary: "An object's changes since a version",
                description: "The committed changes that produced versions after `after`, oldest first, for clients rebasing pending changes. Needs read access to the object.",
                access: .anyCaller, parameters: inClass + ["ObjectId", "After"],
                success: .init(200, "The changes.", schema: "OperationList"), failures: reads),
            OpenAPIOperation(
                "post", "/v1/datastores/{datastore}/query", id: "queryObjects", tag: "Objects", summary: "Query",
                description: "One page of the readable objects a query matches, their total count and the included objects.",
                access: .anyCaller, parameters: ["Datastore"], body: ("QueryRequest", "The query."),
                success: .init(200, "The page.", schema: "QueryResponse"), failures: writes),
            OpenAPIOperation(
                "post", "/v1/datastores/{datastore}/count", id: "countObjects", tag: "Objects", summary: "Count",
                description: "How many readable objects a query matches (`limit` and `offset` are ignored).",
                access: .anyCaller, parameters: ["Datastore"], body: ("QueryRequest", "The query."),
                success: .init(200, "The count.", schema: "CountResponse"), failures: writes),
            OpenAPIOperation(
                "post", "/v1/datastores/{datastore}/remove", id: "removeObjects", tag: "Objects",
                summary: "Delete by query",
                description: "Deletes the objects a query matches, in its order; objects the caller may read but not delete are skipped.",
                access: .anyCaller, parameters: ["Datastore"], body: ("RemoveRequest", "The query and limit."),
                success: .init(200, "How many were deleted.", schema: "RemoveResponse"), failures: writes),
        ]
    }

    static var syncOperations: [OpenAPIOperation] {
        [
            OpenAPIOperation(
                "post", "/v1/push", id: "push", tag: "Sync", summary: "Push mutations",
                description: "Applies queued mutations in order, each atomically and on its own: a rejected mutation is reported in its result and does not stop the others. Idempotent per mutation ID and caller: a retried push gets the first answers.",
                access: .anyCaller, body: ("PushRequest", "The mutations."),
                success: .init(200, "One result per mutation.", schema: "PushResponse"),
                failures: [.badRequest, .unauthorized, .contentTooLarge, .internalError]),
            OpenAPIOperation(
                "post", "/v1/pull", id: "pull", tag: "Sync", summary: "Pull changes",
                description: "One page of the changes to a datastore since a checkpoint, in commit order, filtered by the caller's read access (objects it lost access to come as `removal`).",
                access: .anyCaller, body: ("PullRequest", "The datastore and checkpoint."),
                success: .init(200, "The page.", schema: "PullResponse"),
                failures: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge, .internalError]),
        ]
    }

    /// The live WebSocket: the HTTP/1.1 upgrade handler, plus the router route that answers plain
    /// (not upgraded) requests.
    static var liveOperation: OpenAPIOperation {
        OpenAPIOperation(
            "get", LiveEndpoint.path, id: "live", tag: "Sync", summary: "Live notifications (WebSocket)",
            description: """
                A WebSocket (`Connection: Upgrade`, `Upgrade: websocket`) carrying JSON text messages. \
                The upgrade needs `X-Rooftop-Application-Id`; `X-Rooftop-Session-Token` (or \
                `Authorization: Bearer`) or `X-Rooftop-Admin-Key` sets the initial identity. A request that is \
                not upgraded reaches the router: a wrong application ID or credential gets `401 auth`, \
                anything else `400 request`.

                The client sends `LiveClientMessage`s: `{"type": "subscribe", "datastores": [...], \
                "sessionToken"?: "..."}` and `{"type": "unsubscribe", "datastores": [...]}`. The server sends \
                `LiveServerMessage`s: `{"type": "subscribed", "datastores": [...]}`, then \
                `{"type": "changed", "datastore": "...", "sequence": n}` whenever a change the caller may \
                read is committed (pull to get it), and `{"type": "error", "error": {...}, "datastore"?: "..."}` \
                for a bad message, an unknown datastore or a bad session, without closing the connection. \
                Messages over \(LiveEndpoint.maxMessageBytes) bytes are refused.
                """,
            access: .live,
            success: .init(101, "Switching protocols: the WebSocket is open."),
            failures: [.badRequest, .unauthorized])
    }
}
