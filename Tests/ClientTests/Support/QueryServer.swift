import Foundation
import RooftopShared
import Synchronization

@testable import Rooftop

/// A scripted stand-in for the server, as an ``HTTPTransport``, for the tests of the local
/// datastore (local queries, pins, models, observation), which mostly run it offline: it keeps
/// objects in memory and answers the endpoints the query layer uses — query, count, remove, get
/// with includes, push (a plain apply: no idempotency, no merges) — with the shared
/// ``QueryEvaluator``. It can be switched offline (`noConnection`), made to fail with any error,
/// and it records the requests it saw. Tests of what the server decides (pushes, merges, the
/// feed, remote queries and fetch policies) use the real server (``RealSyncServer``).
final class QueryServer: HTTPTransport {
    private struct State {
        var objects: [ObjectKey: ObjectSnapshot] = [:]
        var failure: RooftopError?
        var requests: [String] = []
        var clock: Int64 = 1_700_000_000_000
        /// Who the server answers as (ACLs apply to queries); admin by default.
        var reader = AccessContext.admin
        var stalls = false
        var cancelled = 0
    }

    private let state = Mutex(State())

    /// Whether requests reach the server; `false` fails them with `noConnection`.
    var isOnline: Bool {
        get { state.withLock { $0.failure == nil } }
        set { state.withLock { $0.failure = newValue ? nil : RooftopError(.noConnection, "offline (test server)") } }
    }

    /// Makes every request fail with an error until `nil` is set (transport errors such as
    /// `timeout` as well as error answers such as `server`).
    func fail(with error: RooftopError?) { state.withLock { $0.failure = error } }

    /// Makes requests hang until their task is cancelled (they then fail with `cancelled`).
    func stall(_ stalls: Bool) { state.withLock { $0.stalls = stalls } }

    /// How many stalled requests were cancelled.
    var cancelledCount: Int { state.withLock { $0.cancelled } }

    /// The requests seen, as `METHOD /path`.
    var requests: [String] { state.withLock { $0.requests } }

    /// How many requests were seen.
    var requestCount: Int { state.withLock { $0.requests.count } }

    /// Whom queries answer as (their ACLs are applied).
    func answer(as reader: AccessContext) { state.withLock { $0.reader = reader } }

    /// Stores objects as the server's, stamped with a new version.
    @discardableResult
    func put(
        _ className: String, _ objectId: String, _ fields: [String: Value], acl: ACL? = nil,
        in datastore: DatastoreID = .app
    ) -> ObjectSnapshot {
        state.withLock { state in
            state.clock += 1
            let key = ObjectKey(datastore: datastore, className: className, objectId: objectId)
            let previous = state.objects[key]
            let snapshot = ObjectSnapshot(
                className: className, objectId: objectId, datastore: datastore, fields: fields, acl: acl,
                createdAt: previous?.createdAt ?? Timestamp(millisecondsSinceEpoch: state.clock),
                updatedAt: Timestamp(millisecondsSinceEpoch: state.clock), version: (previous?.version ?? 0) + 1)
            state.objects[key] = snapshot
            return snapshot
        }
    }

    /// The server's copy of an object.
    func object(_ className: String, _ objectId: String, in datastore: DatastoreID = .app) -> ObjectSnapshot? {
        state.withLock { $0.objects[ObjectKey(datastore: datastore, className: className, objectId: objectId)] }
    }

    /// Deletes the server's copy of an object.
    func delete(_ className: String, _ objectId: String, in datastore: DatastoreID = .app) {
        _ = state.withLock {
            $0.objects.removeValue(forKey: ObjectKey(datastore: datastore, className: className, objectId: objectId))
        }
    }

    func send(_ request: TransportRequest) async throws(RooftopError) -> TransportResponse {
        let (failure, stalls) = state.withLock { state in
            state.requests.append("\(request.method) \(request.path)")
            return (state.failure, state.stalls)
        }
        if let failure { throw failure }
        if stalls {
            // Not a wait for something to happen: a request that never gets an answer.
            do { try await Task.sleep(for: .seconds(3600)) } catch {}
            state.withLock { $0.cancelled += 1 }
            throw RooftopError(.cancelled, "the request was cancelled")
        }
        do {
            return try route(request)
        } catch {
            let refusal =
                error as? RooftopError ?? RooftopError(.request, "the test server could not read it: \(error)")
            let body = (try? Self.encode(refusal)) ?? Data()
            return TransportResponse(status: QueryServer.status(of: refusal), body: body)
        }
    }

    func shutdown() async {}

    // MARK: Routes

    private func route(_ request: TransportRequest) throws -> TransportResponse {
        let (path, queryString) = Self.split(request.path)
        switch (request.method, path.count, path.first == "v1" ? path.dropFirst().first : nil) {
        case ("POST", 4, "datastores") where path[3] == "query":
            let query = try decode(QueryRequest.self, request).makeQuery()
            return try ok(run(query, in: try DatastoreID(path[2])))
        case ("POST", 4, "datastores") where path[3] == "count":
            let query = try decode(QueryRequest.self, request).makeQuery()
            var all = query
            all.offset = 0
            all.limit = nil
            return try ok(CountResponse(count: run(all, in: try DatastoreID(path[2]), paged: false).totalCount))
        case ("POST", 4, "datastores") where path[3] == "remove":
            let body = try decode(RemoveRequest.self, request)
            var query = try body.query.makeQuery()
            query.limit = body.limit
            let doomed = run(query, in: try DatastoreID(path[2]), paged: false).objects
            state.withLock { state in for object in doomed { state.objects[ObjectKey(object)] = nil } }
            return try ok(RemoveResponse(removed: doomed.count))
        case ("GET", 7, "datastores") where path[3] == "classes" && path[5] == "objects":
            let key = ObjectKey(datastore: try DatastoreID(path[2]), className: path[4], objectId: path[6])
            guard let object = state.withLock({ $0.objects[key] }) else {
                throw RooftopError(.notFound, "no such object \(key)")
            }
            let includes = (queryString["include"] ?? "").split(separator: ",").map {
                $0.split(separator: ".").map(String.init)
            }
            let included = QueryEvaluator.run(
                Query(className: key.className, predicate: .thisIn([.objectId(key.objectId)]), includes: includes),
                over: [object], lookup: { self.lookup($0, in: key.datastore) }, canRead: { _ in true }
            ).included
            return try ok(ObjectWithIncludes(object: object, included: included))
        case ("POST", 2, "push"):
            let push = try decode(PushRequest.self, request)
            return try ok(PushResponse(results: push.mutations.map(apply)))
        default:
            throw RooftopError(.notFound, "the test server has no route \(request.method) \(request.path)")
        }
    }

    private func run(_ query: Query, in datastore: DatastoreID, paged: Bool = true) -> RooftopShared.QueryResult {
        var query = query
        if paged { query.limit = min(query.limit ?? Limits.default.defaultQueryLimit, Limits.default.maxQueryLimit) }
        let (objects, reader) = state.withLock { state in
            (state.objects.values.filter { $0.datastore == datastore }, state.reader)
        }
        return QueryEvaluator.run(
            query, over: objects, lookup: { self.lookup($0, in: datastore) },
            canRead: { ACL.allowsRead($0.acl, for: reader) })
    }

    private func lookup(_ pointer: Pointer, in datastore: DatastoreID) -> ObjectSnapshot? {
        state.withLock {
            $0.objects[ObjectKey(datastore: datastore, className: pointer.className, objectId: pointer.objectId)]
        }
    }

    private func apply(_ mutation: Mutation) -> MutationResult {
        state.withLock { state in
            let key = ObjectKey(
                datastore: mutation.datastore, className: mutation.className, objectId: mutation.objectId)
            let current =
                state.objects[key]
                ?? ObjectSnapshot(
                    className: key.className, objectId: key.objectId, datastore: key.datastore)
            do throws(RooftopError) {
                state.clock += 1
                guard var next = try current.applying(mutation.change) else {
                    state.objects[key] = nil
                    return .applied(mutationId: mutation.mutationId, version: current.version + 1, object: nil)
                }
                next.version = current.version + 1
                next.createdAt = current.createdAt ?? Timestamp(millisecondsSinceEpoch: state.clock)
                next.updatedAt = Timestamp(millisecondsSinceEpoch: state.clock)
                state.objects[key] = next
                return .applied(mutationId: mutation.mutationId, version: next.version, object: next)
            } catch {
                return .rejected(mutationId: mutation.mutationId, error: error)
            }
        }
    }

    // MARK: Plumbing

    private func decode<T: Decodable>(_ type: T.Type, _ request: TransportRequest) throws -> T {
        try JSONDecoder().decode(type, from: request.body ?? Data())
    }

    private func ok(_ body: some Encodable) throws -> TransportResponse {
        TransportResponse(status: 200, body: try Self.encode(body))
    }

    private static func encode(_ body: some Encodable) throws -> Data {
        try JSONEncoder().encode(body)
    }

    private static func status(of error: RooftopError) -> Int {
        switch error.code {
        case .notFound: 404
        case .disallowed: 403
        case .server: 500
        default: 400
        }
    }

    /// The decoded path segments and query parameters of a request path.
    private static func split(_ target: String) -> ([String], [String: String]) {
        let parts = target.split(separator: "?", maxSplits: 1).map(String.init)
        let path = (parts.first ?? "").split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        var parameters: [String: String] = [:]
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
            let item = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if item.count == 2 { parameters[item[0]] = item[1] }
        }
        return (path, parameters)
    }
}

/// A client over a ``QueryServer`` with an in-memory store (or a file).
func queryClient(storage: LocalStorage = .inMemory) throws -> (RooftopClient, QueryServer) {
    let server = QueryServer()
    var configuration = ClientConfiguration(serverURL: URL(fileURLWithPath: "/"))
    configuration.storage = storage
    return (try RooftopClient(configuration: configuration, transport: server), server)
}

extension RooftopClient {
    /// Signs a user in locally, as a log-in answer would, with effective roles (tests).
    func signInLocally(_ userId: String, roles: [String] = []) throws {
        try core.begin(
            Session(
                user: UserInfo(objectId: userId, username: userId, roles: roles), sessionToken: "token-\(userId)",
                expiresAt: Timestamp(millisecondsSinceEpoch: Int64.max / 2)))
    }
}
