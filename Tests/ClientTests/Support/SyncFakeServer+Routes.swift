import Foundation
@testable import Rooftop
import RooftopShared

extension SyncFakeServer {
    /// Answers a request the way the real server's routes do.
    func route(_ request: TransportRequest, user: String?) throws -> TransportResponse {
        let (path, query) = SyncFakeServer.split(request.path)
        let segments = path.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        let body = request.body ?? Data("{}".utf8)
        let decoder = JSONDecoder()
        let route = SyncFakeServer.Route(method: request.method, segments: segments)
        switch route {
        case .init("POST", "v1", "users"):
            let signUp = try decoder.decode(SignUpRequest.self, from: body)
            return try SyncFakeServer.ok(state.withLock { state -> Session in
                state.session(for: state.addUser(signUp.username, password: signUp.password))
            })
        case .init("POST", "v1", "login"):
            let logIn = try decoder.decode(LogInRequest.self, from: body)
            return try SyncFakeServer.ok(try state.withLock { state throws(RooftopError) -> Session in
                guard let account = state.users[logIn.username], account.password == logIn.password else {
                    throw RooftopError(.auth, "wrong user name or password")
                }
                return state.session(for: account.user)
            })
        case .init("POST", "v1", "logout"):
            return TransportResponse(status: 200, body: Data("{}".utf8))
        case .init("GET", "v1", "users", "me"):
            let me = state.withLock { state in state.users.values.first { $0.user.objectId == user }?.user }
            guard let me else { throw RooftopError(.auth, "not signed in") }
            return try SyncFakeServer.ok(me)
        case .init("GET", "v1", "classes", "*"):
            let className = segments[2]
            let indexes = state.withLock { $0.indexes[className] ?? [] }
            return try SyncFakeServer.ok(ClassSettings(className: className, mergeRules: [:], indexes: indexes))
        case .init("POST", "v1", "push"):
            return try push(try decoder.decode(PushRequest.self, from: body), user: user)
        case .init("POST", "v1", "pull"):
            let pull = try decoder.decode(PullRequest.self, from: body)
            return try SyncFakeServer.ok(try state.withLock { state throws(RooftopError) in
                state.pullRequests.append(pull)
                return try state.pull(pull, user: user)
            })
        case .init("GET", "v1", "datastores"):
            guard let user else { return try SyncFakeServer.ok(DatastoreList(datastores: [])) }
            let list = state.withLock { state in
                state.datastores.values.filter { !$0.deleted && $0.info.owner == user }.map(\.info).sorted { $0.id < $1.id }
            }
            return try SyncFakeServer.ok(DatastoreList(datastores: list))
        case .init("POST", "v1", "datastores"):
            guard let user else { throw RooftopError(.auth, "sign in to create a datastore") }
            let create = try decoder.decode(CreateDatastoreRequest.self, from: body)
            return try SyncFakeServer.ok(state.withLock { state -> DatastoreInfo in
                let info = DatastoreInfo(
                    id: DatastoreID.generateShareable(), title: create.title, owner: user, role: .owner)
                state.datastores[info.id.rawValue] = FakeServerState.DatastoreState(info: info)
                return info
            })
        case .init("PUT", "v1", "datastores", "*"):
            let id = segments[2]
            let datastore = try DatastoreID(id)
            return try SyncFakeServer.ok(try state.withLock { state throws(RooftopError) -> DatastoreInfo in
                let key = try state.datastore(datastore, user: user)
                return state.datastores[key]?.info ?? DatastoreInfo(id: datastore, owner: user, role: .owner)
            })
        case .init("DELETE", "v1", "datastores", "*"):
            let id = segments[2]
            let datastore = try DatastoreID(id)
            try state.withLock { state throws(RooftopError) in
                let key = try state.datastore(datastore, user: user)
                state.datastores[key]?.deleted = true
            }
            return TransportResponse(status: 200, body: Data("{}".utf8))
        case .init("GET", "v1", "datastores", "*", "classes", "*", "objects", "*", "operations"):
            let (id, className, objectId) = (segments[2], segments[4], segments[6])
            let key = ObjectKey(datastore: try DatastoreID(id), className: className, objectId: objectId)
            let after = Int64(query["after"] ?? "0") ?? 0
            return try SyncFakeServer.ok(OperationList(operations: try state.withLock { state throws(RooftopError) in
                try state.operations(key, after: after, user: user)
            }))
        default:
            throw RooftopError(.notFound, "no route \(request.method) \(path) (fake server)")
        }
    }

    private func push(_ request: PushRequest, user: String?) throws -> TransportResponse {
        let response = state.withLock { state -> PushResponse in
            state.pushes.append(request)
            var chains: [String: FakeServerState.Chain] = [:]
            return PushResponse(results: request.mutations.map { state.apply($0, user: user, chains: &chains) })
        }
        return try SyncFakeServer.ok(response)
    }

    /// A method and path pattern; `*` matches any one segment.
    struct Route: Equatable {
        var method: String
        var segments: [String]

        init(method: String, segments: [String]) {
            self.method = method
            self.segments = segments
        }

        init(_ method: String, _ segments: String...) {
            self.init(method: method, segments: segments)
        }

        static func ~= (pattern: Route, value: Route) -> Bool {
            pattern.method == value.method && pattern.segments.count == value.segments.count
                && zip(pattern.segments, value.segments).allSatisfy { $0 == "*" || $0 == $1 }
        }
    }

    private static func split(_ path: String) -> (String, [String: String]) {
        guard let mark = path.firstIndex(of: "?") else { return (path, [:]) }
        var query: [String: String] = [:]
        for pair in path[path.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { query[parts[0]] = parts[1] }
        }
        return (String(path[..<mark]), query)
    }
}
