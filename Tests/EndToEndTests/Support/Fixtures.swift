import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import RooftopShared

/// A signed-up user: its ID, name, password and session token.
struct TestUser: Sendable {
    var id: String
    var username: String
    var password: String
    var token: String

    /// The user as an ACL principal.
    var principal: Principal { .user(id) }
}

/// Unique names, so that tests sharing one server never see each other's users, roles or classes.
enum Unique {
    /// `prefix` and 12 random characters, valid as a user, role or class name.
    static func name(_ prefix: String) -> String {
        prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    }
}

extension ACL {
    /// An ACL from `(principal, read, write)` triples.
    static func of(_ entries: (Principal, read: Bool, write: Bool)...) -> ACL {
        var acl = ACL()
        for (principal, read, write) in entries {
            acl.setReadAccess(read, for: principal)
            acl.setWriteAccess(write, for: principal)
        }
        return acl
    }
}

extension APIClient {
    /// Signs up a user with a unique name.
    func newUser(_ prefix: String = "user", password: String = "password-1") async throws -> TestUser {
        let session = try await signUp(Unique.name(prefix), password: password)
        return TestUser(
            id: session.user.objectId, username: session.user.username, password: password,
            token: session.sessionToken)
    }

    /// `/v1/datastores/<datastore>/classes/<className>/objects[/<objectId>]` (``API/createObject``,
    /// ``API/getObject``).
    static func objectPath(_ datastore: DatastoreID, _ className: String, _ objectId: String? = nil) -> String {
        if let objectId { API.getObject.path(datastore.rawValue, className, objectId) }
        else { API.createObject.path(datastore.rawValue, className) }
    }

    /// Creates an object and returns it as stored.
    func create(
        _ className: String, in datastore: DatastoreID = .app, fields: [String: Value] = [:], acl: ACL? = nil,
        objectId: String? = nil, as user: TestUser? = nil, admin: Bool = false
    ) async throws -> ObjectSnapshot {
        let reply = try await call(
            API.createObject, APIClient.objectPath(datastore, className),
            body: ObjectWriteBody(objectId: objectId, fields: fields, acl: acl), token: user?.token, admin: admin)
        guard let object = reply.object else { throw FixtureError("create answered without an object") }
        // The new ID is at the top of the answer, for a create that named none as for one that did.
        guard reply.objectId == object.objectId, objectId == nil || objectId == reply.objectId else {
            throw FixtureError("create answered objectId \(reply.objectId) for object \(object.objectId)")
        }
        return object
    }

    /// `GET` of one object, answer unchecked.
    func get(
        _ object: ObjectSnapshot, include: String? = nil, as user: TestUser? = nil, admin: Bool = false
    ) async throws -> Reply {
        let query = include.map { "?include=" + $0 } ?? ""
        return try await send(
            API.getObject, APIClient.objectPath(object.datastore, object.className, object.objectId) + query,
            token: user?.token, admin: admin)
    }

    /// `PATCH` setting fields (and optionally the ACL), answer unchecked.
    func update(
        _ object: ObjectSnapshot, fields: [String: Value], acl: ACL? = nil, as user: TestUser? = nil,
        admin: Bool = false
    ) async throws -> Reply {
        try await send(
            API.updateObject, APIClient.objectPath(object.datastore, object.className, object.objectId),
            body: ObjectWriteBody(fields: fields, acl: acl), token: user?.token, admin: admin)
    }

    /// `DELETE` of one object, answer unchecked.
    func delete(_ object: ObjectSnapshot, as user: TestUser? = nil, admin: Bool = false) async throws -> Reply {
        try await send(
            API.deleteObject, APIClient.objectPath(object.datastore, object.className, object.objectId), token: user?.token,
            admin: admin)
    }

    /// `POST .../query`, answer unchecked.
    func sendQuery(_ query: Query, in datastore: DatastoreID = .app, as user: TestUser? = nil, admin: Bool = false)
        async throws -> Reply
    {
        try await send(
            API.queryObjects, API.queryObjects.path(datastore.rawValue), body: QueryRequest.query(query), token: user?.token,
            admin: admin)
    }

    /// Runs a query that must succeed.
    func find(_ query: Query, in datastore: DatastoreID = .app, as user: TestUser? = nil, admin: Bool = false)
        async throws -> QueryResponse
    {
        try await call(
            API.queryObjects, API.queryObjects.path(datastore.rawValue), body: QueryRequest.query(query), token: user?.token,
            admin: admin)
    }

    /// `POST .../count`, answer unchecked.
    func sendCount(_ query: Query, in datastore: DatastoreID = .app, as user: TestUser? = nil, admin: Bool = false)
        async throws -> Reply
    {
        try await send(
            API.countObjects, API.countObjects.path(datastore.rawValue), body: QueryRequest.query(query), token: user?.token,
            admin: admin)
    }

    /// Counts objects; the count must succeed.
    func count(_ query: Query, in datastore: DatastoreID = .app, as user: TestUser? = nil, admin: Bool = false)
        async throws -> Int
    {
        let reply = try await call(
            API.countObjects, API.countObjects.path(datastore.rawValue), body: QueryRequest.query(query), token: user?.token,
            admin: admin)
        return reply.count
    }

    /// Removes what a query matches; must succeed.
    func remove(_ query: Query, in datastore: DatastoreID = .app, limit: Int? = nil, as user: TestUser? = nil)
        async throws -> Int
    {
        let reply = try await call(
            API.removeObjects, API.removeObjects.path(datastore.rawValue), body: RemoveRequest(query: .query(query), limit: limit),
            token: user?.token)
        return reply.removed
    }

    /// One pull page, answer unchecked.
    func sendPull(
        _ datastore: DatastoreID = .app, since: Checkpoint? = nil, classes: [String]? = nil, as user: TestUser? = nil,
        admin: Bool = false
    ) async throws -> Reply {
        try await send(
            API.pull, body: PullRequest(datastore: datastore, since: since, classes: classes),
            token: user?.token, admin: admin)
    }

    /// Pulls every page since a checkpoint; must succeed.
    func pullAll(
        _ datastore: DatastoreID = .app, since: Checkpoint? = nil, classes: [String]? = nil, limit: Int? = nil,
        as user: TestUser? = nil, admin: Bool = false
    ) async throws -> (changes: [PullChange], checkpoint: Checkpoint) {
        var changes: [PullChange] = []
        var checkpoint = since
        while true {
            let page = try await call(
                API.pull, body: PullRequest(datastore: datastore, since: checkpoint, limit: limit, classes: classes),
                token: user?.token, admin: admin)
            changes += page.changes
            checkpoint = page.checkpoint
            if !page.hasMore { return (changes, page.checkpoint) }
        }
    }

    /// Creates a role (as a user, or with the admin key when `owner` is `nil`).
    @discardableResult
    func createRole(_ name: String, users: [TestUser] = [], roles: [String] = [], by owner: TestUser? = nil)
        async throws -> RoleInfo
    {
        try await call(
            API.createRole, body: CreateRoleRequest(name: name, users: users.map(\.id), roles: roles),
            token: owner?.token, admin: owner == nil)
    }

    /// Changes a role's members with the admin key.
    @discardableResult
    func updateRole(_ name: String, _ change: UpdateRoleRequest) async throws -> RoleInfo {
        try await call(API.updateRole, API.updateRole.path(name), body: change, admin: true)
    }

    /// Sets a class's permissions with the admin key, sending the shared wire type.
    func setPermissions(_ permissions: ClassPermissions, of className: String) async throws {
        let reply = try await send(
            API.putClassSettings, API.putClassSettings.path(className),
            body: ClassPermissionsRequest(className: className, permissions: permissions), admin: true)
        guard reply.status == 200 else { throw APIClientError.status(reply.status, reply.error, reply.text) }
    }

    /// Creates a shareable datastore owned by `user`.
    func createShareable(by user: TestUser, title: String? = nil) async throws -> DatastoreInfo {
        try await call(API.createDatastore, body: CreateDatastoreRequest(title: title), token: user.token)
    }

    /// Gives `principal` a role on a shareable datastore, as `user`; answer unchecked.
    func setRole(_ role: SharingRole, for principal: Principal, on datastore: DatastoreID, by user: TestUser)
        async throws -> Reply
    {
        try await send(
            API.setDatastoreRole, API.setDatastoreRole.path(datastore.rawValue), body: SetRoleRequest(principal: principal, role: role),
            token: user.token)
    }
}

extension APIClient {
    /// Sends a body-less request with exactly these extra headers (besides the application ID),
    /// from a given loopback source address when one is named (the server throttles per client
    /// address: the whole 127/8 reaches it).
    func send(
        _ method: HTTPMethod, _ path: String, headers: [String: String], from localAddress: String? = nil
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: server.baseURL + path)
        request.method = method
        if let localAddress { request.localAddress = localAddress }
        request.headers.add(name: "X-Rooftop-Application-Id", value: server.appId)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1024 * 1024)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }

    /// Logs in from a given loopback source address (the server throttles per client address,
    /// so tests that exercise throttling each use their own: the whole 127/8 reaches the server).
    /// - Parameter headers: Extra headers (e.g. `X-Forwarded-For`).
    func logIn(
        _ username: String, password: String, from localAddress: String, headers: [String: String] = [:]
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: server.baseURL + API.logIn.path())
        request.method = .POST
        request.localAddress = localAddress
        request.headers.add(name: "X-Rooftop-Application-Id", value: server.appId)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = try JSONEncoder().encode(LogInRequest(username: username, password: password))
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1024 * 1024)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }
}

extension [PullChange] {
    /// The kinds of the changes about one object, in order (`upsert`, `tombstone`, `removal`).
    func kinds(of objectId: String) -> [String] {
        filter { $0.objectId == objectId }.map { change in
            switch change {
            case .upsert: "upsert"
            case .tombstone: "tombstone"
            case .removal: "removal"
            }
        }
    }

    /// The IDs of the objects mentioned at all.
    var objectIds: Set<String> { Set(map(\.objectId)) }
}

extension QueryResponse {
    /// The IDs of the objects in the page.
    var ids: Set<String> { Set(objects.map(\.objectId)) }
}

/// A fixture that could not be set up.
struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
