/// The HTTP API, stated once: every operation as an ``APIEndpoint``, in the order of the OpenAPI
/// document the server serves (generated from these), grouped in extensions by the document's tags.
///
/// ```swift
/// API.push.operation.path                      // "/v1/push"
/// API.getObject.path(datastore, className, id) // "/v1/datastores/…/classes/…/objects/…"
/// ```
public enum API {
    /// Every operation, in the document's order.
    public static let all: [APIOperation] = [
        getHealth.operation,
        getMetrics.operation,
        getOpenAPIDocumentYAML.operation,
        getOpenAPIDocument.operation,
        getServerInfo.operation,
        signUp.operation,
        listUsers.operation,
        getUser.operation,
        setUserPassword.operation,
        listUserSessions.operation,
        revokeUserSessions.operation,
        logIn.operation,
        logOut.operation,
        getCurrentUser.operation,
        createRole.operation,
        getRole.operation,
        updateRole.operation,
        deleteRole.operation,
        getClassSettings.operation,
        putClassSettings.operation,
        listDatastores.operation,
        createDatastore.operation,
        openDatastore.operation,
        getDatastore.operation,
        deleteDatastore.operation,
        getDatastoreSharing.operation,
        setDatastoreRole.operation,
        createObject.operation,
        getObject.operation,
        updateObject.operation,
        deleteObject.operation,
        listObjectOperations.operation,
        queryObjects.operation,
        countObjects.operation,
        removeObjects.operation,
        push.operation,
        pull.operation,
        live.operation,
    ]
}
