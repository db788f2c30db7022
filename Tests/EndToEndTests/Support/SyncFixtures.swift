import Foundation
import NIOHTTP1
import RooftopShared
import Synchronization
import RooftopTestSupport

/// The body of `PUT /v1/classes/:className` (the server's `ClassSettings`, which lives in the
/// server module the tests do not link).
struct ClassSettingsChange: Codable, Sendable {
    var className: String
    var permissions: ClassPermissions = .default
    var mergeRules: [String: MergeRule] = [:]
    var indexes: [[String]] = []
}

/// Builders for mutations and small helpers over the sync endpoints, shared by the push, pull,
/// durability, limits and hostile-input suites.
extension APIClient {
    /// Pushes mutations and decodes the answer (fails on any non-2xx status).
    func push(_ mutations: [Mutation], token: String?) async throws -> PushResponse {
        try await call(API.push, body: PushRequest(mutations: mutations), token: token)
    }

    /// Pushes one mutation and returns its result.
    func push(_ mutation: Mutation, token: String?) async throws -> MutationResult {
        let response = try await push([mutation], token: token)
        guard response.results.count == 1, let result = response.results.first else {
            throw FixtureError("a push of one mutation answered \(response.results.count) results")
        }
        return result
    }

    /// One page of the change feed.
    func pull(_ request: PullRequest, token: String?, admin: Bool = false) async throws -> PullResponse {
        try await call(API.pull, body: request, token: token, admin: admin)
    }

    /// Pulls pages until `hasMore` is false; returns every page.
    func pullPages(
        _ datastore: DatastoreID, since: Checkpoint? = nil, limit: Int? = nil, classes: [String]? = nil,
        token: String?, maxPages: Int = 10_000
    ) async throws -> [PullResponse] {
        var pages: [PullResponse] = []
        var checkpoint = since
        for _ in 0..<maxPages {
            let page = try await pull(
                PullRequest(datastore: datastore, since: checkpoint, limit: limit, classes: classes), token: token)
            pages.append(page)
            checkpoint = page.checkpoint
            if !page.hasMore { return pages }
        }
        throw FixtureError("the pull did not finish within \(maxPages) pages")
    }

    /// Runs a query in text form (`""` for all objects of the class).
    func query(
        _ datastore: DatastoreID, className: String, text: String = "", parameters: [Value] = [], token: String?,
        admin: Bool = false
    ) async throws -> QueryResponse {
        try await call(
            API.queryObjects, API.queryObjects.path(datastore.rawValue),
            body: QueryRequest.text(className: className, text: text, parameters: parameters), token: token,
            admin: admin)
    }

    /// Every object of a class (up to the maximum query limit), keyed by object ID.
    func allObjects(
        _ datastore: DatastoreID, className: String, token: String?
    ) async throws -> [String: ObjectSnapshot] {
        let response = try await query(datastore, className: className, text: "limit 1000", token: token)
        return Dictionary(response.objects.map { ($0.objectId, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The number of objects of a class a caller can see.
    func count(_ datastore: DatastoreID, className: String, token: String?) async throws -> Int {
        let response = try await call(
            API.countObjects, API.countObjects.path(datastore.rawValue),
            body: QueryRequest.text(className: className, text: "", parameters: []),
            token: token)
        return response.count
    }

    /// One object by ID, or `nil` when it is missing (404).
    func object(
        _ datastore: DatastoreID, className: String, objectId: String, token: String?
    ) async throws
        -> ObjectSnapshot?
    {
        let reply = try await send(
            API.getObject, API.getObject.path(datastore.rawValue, className, objectId), token: token)
        if reply.status == 404 { return nil }
        guard reply.status == 200 else { throw APIClientError.status(reply.status, reply.error, reply.text) }
        return try reply.decode(ObjectWithIncludes.self).object
    }

    /// Sets a class's permissions, merge rules and declared indexes (admin).
    func setClass(
        _ className: String, rules: [String: MergeRule] = [:], permissions: ClassPermissions = .default,
        indexes: [[String]] = []
    )
        async throws
    {
        _ = try await call(
            API.putClassSettings, API.putClassSettings.path(className),
            body: ClassSettingsChange(className: className, permissions: permissions, mergeRules: rules, indexes: indexes),
            admin: true)
    }

    /// Creates a shareable datastore owned by `owner` and gives `others` a role on it.
    func shareableDatastore(
        owner: TestUser, sharedWith others: [TestUser] = [], role: SharingRole = .editor
    )
        async throws -> DatastoreID
    {
        let info = try await call(
            API.createDatastore, body: CreateDatastoreRequest(title: "shared"), token: owner.token)
        for other in others {
            try await share(info.id, role, with: other, by: owner)
        }
        return info.id
    }

    /// Sets a user's role on a shareable datastore; must succeed.
    func share(_ datastore: DatastoreID, _ role: SharingRole, with user: TestUser, by owner: TestUser) async throws {
        _ = try await call(
            API.setDatastoreRole, API.setDatastoreRole.path(datastore.rawValue), body: SetRoleRequest(principal: .user(user.id), role: role),
            token: owner.token)
    }
}

/// Mutation builders.
enum Mutations {
    /// Creates (or blindly overwrites) an object with field sets.
    static func create(
        _ datastore: DatastoreID, _ className: String, _ objectId: String = ObjectID.generate(),
        fields: [String: Value], acl: ACL? = nil, id: MutationID = .generate()
    ) -> Mutation {
        let updates = fields.sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
        return Mutation(
            mutationId: id, datastore: datastore, className: className, objectId: objectId, baseVersion: nil,
            change: .update(updates, acl: acl))
    }

    /// Updates an object with operations, based on a version.
    static func update(
        _ datastore: DatastoreID, _ className: String, _ objectId: String, base: Int64?, _ updates: [FieldUpdate],
        id: MutationID = .generate()
    ) -> Mutation {
        Mutation(
            mutationId: id, datastore: datastore, className: className, objectId: objectId, baseVersion: base,
            change: .update(updates))
    }

    /// Deletes an object, based on a version.
    static func delete(
        _ datastore: DatastoreID, _ className: String, _ objectId: String, base: Int64?, id: MutationID = .generate()
    ) -> Mutation {
        Mutation(
            mutationId: id, datastore: datastore, className: className, objectId: objectId, baseVersion: base,
            change: .delete)
    }
}

extension MutationResult {
    /// The version of an applied result.
    var appliedVersion: Int64? {
        if case .applied(_, let version, _, _) = self { version } else { nil }
    }

    /// The object of an applied result.
    var appliedObject: ObjectSnapshot? {
        if case .applied(_, _, let object, _) = self { object } else { nil }
    }

    /// The merge decisions of an applied result.
    var merges: [MergeDecision] {
        if case .applied(_, _, _, let merges) = self { merges } else { [] }
    }

    /// The result without its object: what a retry of the mutation is answered with exactly
    /// (the object it carries then is the object's current state).
    var decision: MutationResult {
        if case .applied(let id, let version, _, let merges) = self {
            .applied(mutationId: id, version: version, object: nil, merges: merges)
        } else {
            self
        }
    }
}

/// A unique class name for one test (class settings are server-wide).
func uniqueClassName(_ prefix: String) -> String {
    "\(prefix)\(UUID().uuidString.prefix(8).replacingOccurrences(of: "-", with: ""))"
}

/// Runs `body` with a client of `server`, shut down whatever happens.
func withClient<T>(_ server: ServerProcess, _ body: (APIClient) async throws -> T) async throws -> T {
    try await scoped(try APIClient(server: server), release: { await $0.shutdown() }, body)
}

/// A flag one task sets and another reads.
final class DoneFlag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }

    func set() { value.withLock { $0 = true } }
}
