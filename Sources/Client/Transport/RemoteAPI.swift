import Foundation
import Synchronization
import RooftopShared

/// The server's REST API as typed calls: every request carries the application ID and, when
/// signed in, the session token; every answer is decoded into the shared wire types, and every
/// error answer into the server's `RooftopError`.
final class RemoteAPI: Sendable {
    private let transport: any HTTPTransport
    private let appId: String
    private let session: SessionTokenStore

    init(transport: any HTTPTransport, appId: String, session: SessionTokenStore) {
        self.transport = transport
        self.appId = appId
        self.session = session
    }

    // MARK: Accounts

    func info() async throws(RooftopError) -> ServerInfo {
        try await call(API.getServerInfo)
    }

    func signUp(_ request: SignUpRequest) async throws(RooftopError) -> Session {
        try await call(API.signUp, body: request, authenticated: false)
    }

    func logIn(_ request: LogInRequest) async throws(RooftopError) -> Session {
        try await call(API.logIn, body: request, authenticated: false)
    }

    func logOut() async throws(RooftopError) {
        try await send(API.logOut)
    }

    func currentUser() async throws(RooftopError) -> UserInfo {
        try await call(API.getCurrentUser)
    }

    func classSettings(_ className: String) async throws(RooftopError) -> ClassSettings {
        try await call(API.getClassSettings, API.getClassSettings.path(className))
    }

    // MARK: Roles

    func createRole(_ request: CreateRoleRequest) async throws(RooftopError) -> RoleInfo {
        try await call(API.createRole, body: request)
    }

    func role(named name: String) async throws(RooftopError) -> RoleInfo {
        try await call(API.getRole, API.getRole.path(name))
    }

    func updateRole(named name: String, _ request: UpdateRoleRequest) async throws(RooftopError) -> RoleInfo {
        try await call(API.updateRole, API.updateRole.path(name), body: request)
    }

    func deleteRole(named name: String) async throws(RooftopError) {
        try await send(API.deleteRole, API.deleteRole.path(name))
    }

    // MARK: Objects and queries

    func object(_ key: ObjectKey, includes: [[String]]) async throws(RooftopError) -> ObjectWithIncludes {
        var path = API.getObject.path(key.datastore.rawValue, key.className, key.objectId)
        if !includes.isEmpty {
            path += "?include=" + includes.map { $0.map(APIOperation.escape).joined(separator: ".") }.joined(separator: ",")
        }
        let answer = try await call(API.getObject, path)
        try RemoteAPI.checkIdentifiers([answer.object] + answer.included, answering: "GET \(path)")
        return answer
    }

    /// The object's operations after `version`.
    /// - Throws: `response` when an operation names a field by a name that breaks the ID rules:
    ///   a rebase writes its fields into the local view, so they are checked as an object's are
    ///   (``checkIdentifiers(_:answering:)``).
    func operations(_ key: ObjectKey, after version: Int64) async throws(RooftopError) -> [OperationRecord] {
        let path = API.listObjectOperations.path(key.datastore.rawValue, key.className, key.objectId) + "?after=\(version)"
        let list = try await call(API.listObjectOperations, path)
        for (position, record) in list.operations.enumerated() {
            var fields = Array(record.priorValues.keys)
            if case .update(let updates, _) = record.change { fields += updates.map(\.field) }
            try RemoteAPI.checkFieldNames(fields, answering: "GET \(path)", "changes", at: "operation \(position)")
        }
        return list.operations
    }

    func query(_ request: QueryRequest, in datastore: DatastoreID) async throws(RooftopError) -> QueryResponse {
        let path = API.queryObjects.path(datastore.rawValue)
        let answer = try await call(API.queryObjects, path, body: request)
        try RemoteAPI.checkIdentifiers(answer.objects + answer.included, answering: "POST \(path)")
        return answer
    }

    func count(_ request: QueryRequest, in datastore: DatastoreID) async throws(RooftopError) -> Int {
        try await call(API.countObjects, API.countObjects.path(datastore.rawValue), body: request).count
    }

    func remove(_ request: RemoveRequest, in datastore: DatastoreID) async throws(RooftopError) -> Int {
        try await call(API.removeObjects, API.removeObjects.path(datastore.rawValue), body: request).removed
    }

    // MARK: Sync

    /// Sends a push; its answer is read directly (``PushResponse/decodeDocument(_:)``).
    func push(_ request: PushRequest) async throws(RooftopError) -> PushResponse {
        let response = try await send(API.push, body: request)
        let answer: PushResponse
        do {
            answer = try PushResponse.decodeDocument(response.body)
        } catch {
            throw RooftopError(.response, "the server's answer to \(API.push.operation) could not be read", cause: error)
        }
        try RemoteAPI.checkIdentifiers(
            answer.results.lazy.compactMap { result in
                if case .applied(_, _, let object?, _) = result { object } else { nil }
            },
            answering: "\(API.push.operation)")
        return answer
    }

    func pull(_ request: PullRequest) async throws(RooftopError) -> PullResponse {
        try await receivePage(request).read().response
    }

    /// A pull page as received, before its changes are read: a sync asks for the next page
    /// (``next``) while it reads this one.
    struct ReceivedPage: Sendable {
        /// The page's JSON, as received.
        let body: Data
        /// The checkpoint the pull goes on from when the page has more (``PullResponse/continuation(of:)``).
        let next: Checkpoint?

        /// The page, read directly rather than through `Codable` (pages are the bulk of a sync),
        /// with each upserted object's JSON text as received
        /// (``PullResponse/decodeDocumentWithObjectTexts(_:)``).
        /// - Throws: `response` when the body is not a page, or names an object by an invalid
        ///   class name or object ID, or gives an object a field whose name breaks the ID rules
        ///   (``RemoteAPI/checkIdentifiers(_:answering:)``).
        func read() throws(RooftopError) -> ReadPage {
            let page: PullResponse
            let texts: [String?]
            do {
                (page, texts) = try PullResponse.decodeDocumentWithObjectTexts(body)
            } catch {
                throw RooftopError(.response, "the server's answer to \(API.pull.operation) could not be read", cause: error)
            }
            try RemoteAPI.checkIdentifiers(
                page.changes.lazy.map { change in
                    if case .upsert(let object) = change { (object.className, object.objectId, object.fields) }
                    else { (change.className, change.objectId, nil) }
                },
                answering: "\(API.pull.operation)")
            return ReadPage(response: page, objectTexts: texts)
        }
    }

    /// A pull page as read (``ReceivedPage/read()``).
    struct ReadPage: Sendable {
        let response: PullResponse
        /// Each upserted object's JSON text as received, by change: what the store keeps of it
        /// (``PreparedObject``). `nil` for a tombstone or a removal, or when the page was read
        /// through `Codable`.
        let objectTexts: [String?]
    }

    /// Asks for a pull page (``pull(_:)``) without reading its changes yet.
    func receivePage(_ request: PullRequest) async throws(RooftopError) -> ReceivedPage {
        let response = try await send(API.pull, body: request)
        return ReceivedPage(body: response.body, next: PullResponse.continuation(of: response.body))
    }

    // MARK: Datastores

    func datastores() async throws(RooftopError) -> [DatastoreInfo] {
        try await call(API.listDatastores).datastores
    }

    func createDatastore(title: String?) async throws(RooftopError) -> DatastoreInfo {
        try await call(API.createDatastore, body: CreateDatastoreRequest(title: title))
    }

    func openDatastore(_ id: DatastoreID) async throws(RooftopError) -> DatastoreInfo {
        try await call(API.openDatastore, API.openDatastore.path(id.rawValue))
    }

    func deleteDatastore(_ id: DatastoreID) async throws(RooftopError) {
        try await send(API.deleteDatastore, API.deleteDatastore.path(id.rawValue))
    }

    func setRole(_ role: SharingRole, for principal: Principal, on id: DatastoreID) async throws(RooftopError)
        -> DatastoreInfo
    {
        try await call(
            API.setDatastoreRole, API.setDatastoreRole.path(id.rawValue), body: SetRoleRequest(principal: principal, role: role))
    }

    func sharing(of id: DatastoreID) async throws(RooftopError) -> DatastoreSharing {
        try await call(API.getDatastoreSharing, API.getDatastoreSharing.path(id.rawValue))
    }

    // MARK: Plumbing

    /// Refuses an answer that names an object by a class name or object ID, or gives it a field
    /// whose name, that breaks the ID rules (``Identifier``; reserved `:` names allowed): what a
    /// server stores always follows them (it checks every field name it writes), and the local
    /// store keys, indexes and pins objects by those names and keeps a row per indexed field by
    /// its name (a name of a megabyte, or one with a NUL byte, would be kept as it came). A pull
    /// page, a query's or a get's objects and a push's applied objects are refused as a whole,
    /// before anything of them is stored.
    /// - Parameters:
    ///   - names: Each object's class name and ID, with its fields when the answer carries them
    ///     (`nil` for a pull's tombstones and removals).
    ///   - answering: The request, for the message.
    /// - Throws: `response`, naming the object's position and the name that breaks the rules.
    static func checkIdentifiers(
        _ names: some Sequence<(className: String, objectId: String, fields: [String: Value]?)>,
        answering request: String
    ) throws(RooftopError) {
        for (position, name) in names.enumerated() {
            guard Identifier.isValid(name.className), Identifier.isValid(name.objectId) else {
                let shown = String(name.className.prefix(80)) + "/" + String(name.objectId.prefix(80))
                throw RooftopError(
                    .response,
                    "the server's answer to \(request) names an object by an invalid class name or object ID"
                        + " (object \(position): \(shown.debugDescription))")
            }
            if let fields = name.fields {
                try checkFieldNames(
                    fields.keys, answering: request, "gives an object",
                    at: "object \(position), \(name.className)/\(name.objectId)")
            }
        }
    }

    /// Refuses an answer that `does` (says what, for the message) something to a field named
    /// against the ID rules, found `at` (a place in the answer, for the message).
    /// - Throws: `response`, naming the place and the field.
    private static func checkFieldNames(
        _ names: some Sequence<String>, answering request: String, _ does: String, at place: @autoclosure () -> String
    ) throws(RooftopError) {
        guard let field = names.first(where: { !Identifier.isValid($0) }) else { return }
        throw RooftopError(
            .response,
            "the server's answer to \(request) \(does) a field with an invalid name"
                + " (\(place()): \(String(field.prefix(80)).debugDescription))")
    }

    /// ``checkIdentifiers(_:answering:)`` of objects.
    static func checkIdentifiers(_ objects: some Sequence<ObjectSnapshot>, answering request: String) throws(RooftopError) {
        try checkIdentifiers(objects.lazy.map { ($0.className, $0.objectId, $0.fields) }, answering: request)
    }

    /// Sends a request to `endpoint` (at `path`, by default its own: an endpoint without
    /// parameters) and decodes a 2xx answer as its `Answer`.
    private func call<Body: Encodable, Answer: Decodable>(
        _ endpoint: APIEndpoint<Body, Answer>, _ path: String? = nil, body: Body? = nil, authenticated: Bool = true
    ) async throws(RooftopError) -> Answer {
        let path = try endpoint.requestPath(path)
        let response = try await send(endpoint, path, body: body, authenticated: authenticated)
        do {
            return try JSONDecoder().decode(Answer.self, from: response.body)
        } catch {
            let method = endpoint.operation.method.rawValue
            throw RooftopError(.response, "the server's answer to \(method) \(path) could not be read", cause: error)
        }
    }

    /// Sends a request to `endpoint` (at `path`, by default its own); a non-2xx answer becomes
    /// the server's error.
    /// - Throws: `illegalArgument` without sending anything when the path has an empty segment
    ///   (``APIEndpoint/requestPath(_:)``).
    @discardableResult
    private func send<Body: Encodable, Answer>(
        _ endpoint: APIEndpoint<Body, Answer>, _ path: String? = nil, body: Body? = nil, authenticated: Bool = true
    ) async throws(RooftopError) -> TransportResponse {
        let path = try endpoint.requestPath(path)
        var request = TransportRequest(method: endpoint.operation.method.rawValue, path: path)
        request.headers.append(("X-Rooftop-Application-Id", appId))
        if authenticated, let token = session.token {
            request.headers.append(("X-Rooftop-Session-Token", token))
        }
        if let body {
            do {
                request.body = try ClientRequestBody.encoded(body)
            } catch {
                throw RooftopError(.illegalArgument, "the request could not be encoded", cause: error)
            }
        }
        let response = try await transport.send(request)
        guard (200..<300).contains(response.status) else {
            throw RemoteAPI.error(status: response.status, body: response.body)
        }
        return response
    }

    /// The error an answer carries: its `{code, message}` body, or one made from the status.
    static func error(status: Int, body: Data) -> RooftopError {
        if let error = try? JSONDecoder().decode(RooftopError.self, from: body) { return error }
        switch status {
        case 401: return RooftopError(.auth, "authentication failed (HTTP 401)")
        case 403: return RooftopError(.disallowed, "not allowed (HTTP 403)")
        case 404: return RooftopError(.notFound, "not found (HTTP 404)")
        case 413: return RooftopError(.sizeLimit, "too large (HTTP 413)")
        case 429, 503: return RooftopError(.retryLater, "the server is busy (HTTP \(status))")
        case 500...: return RooftopError(.server, "the server failed (HTTP \(status))")
        default: return RooftopError(.response, "unexpected answer (HTTP \(status))")
        }
    }

}

/// The session token requests are signed with, shared by the client's components.
final class SessionTokenStore: Sendable {
    private let state = Mutex<String?>(nil)

    /// The current token, if signed in.
    var token: String? { state.withLock { $0 } }

    /// Every new token (nil after log-out), as it is set; the live connection follows it.
    let changes = Broadcaster<String?>()

    /// Replaces the token (nil after log-out).
    func set(_ token: String?) {
        let changed = state.withLock { state in
            defer { state = token }
            return state != token
        }
        if changed { changes.publish(token) }
    }
}
