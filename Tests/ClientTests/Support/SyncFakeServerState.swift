import Foundation
@testable import Rooftop
import RooftopShared

/// The fake server's data and its write and feed rules (see ``SyncFakeServer``).
struct FakeServerState {
    struct StoredObject {
        var snapshot: ObjectSnapshot
        var deleted = false
        var sequence: Int64
        var operations: [OperationRecord] = []
        var hiddenFrom: Set<String> = []
    }

    struct DatastoreState {
        var info: DatastoreInfo
        var objects: [String: StoredObject] = [:]
        var deleted = false
    }

    /// A client's earlier mutations of one object in the same push, on the same base.
    struct Chain {
        var sentBase: Int64?
        var changes: [ObjectChange]
        var origins: Set<String>
    }

    var users: [String: (user: UserInfo, password: String)] = [:]
    var tokens: [String: String] = [:]
    var datastores: [String: DatastoreState] = [:]
    var sequence: Int64 = 0
    var results: [String: MutationResult] = [:]
    /// The indexes each class declares (``ClassSettings/indexes``).
    var indexes: [String: [[String]]] = [:]
    var offline = false
    var failures: [(String, RooftopError)] = []
    var pagesBeforeInterruption: Int?
    var pageSize = 100
    var log: [String] = []
    var pushes: [PushRequest] = []
    var pullRequests: [PullRequest] = []

    // MARK: Accounts and datastores

    mutating func addUser(_ username: String, password: String) -> UserInfo {
        if let existing = users[username] { return existing.user }
        let user = UserInfo(objectId: "u\(users.count + 1)", username: username)
        users[username] = (user, password)
        return user
    }

    mutating func session(for user: UserInfo) -> Session {
        let token = "t-\(user.objectId)-\(tokens.count)"
        tokens[token] = user.objectId
        return Session(user: user, sessionToken: token, expiresAt: Timestamp(millisecondsSinceEpoch: 4_000_000_000_000))
    }

    /// Private datastores are per user; others are global.
    static func datastoreKey(_ id: DatastoreID, owner: String?) -> String {
        id.kind == .private ? "\(owner ?? "")|\(id.rawValue)" : id.rawValue
    }

    /// The datastore for a caller, created when private or `:app`.
    mutating func datastore(_ id: DatastoreID, user: String?) throws(RooftopError) -> String {
        if id.kind == .private, user == nil { throw RooftopError(.auth, "private datastores belong to a signed-in user") }
        let key = FakeServerState.datastoreKey(id, owner: user)
        if datastores[key] == nil, id.kind != .shareable {
            datastores[key] = DatastoreState(
                info: DatastoreInfo(id: id, owner: id.kind == .private ? user : nil, role: id.kind == .private ? .owner : .editor))
        }
        guard let datastore = datastores[key], !datastore.deleted else { throw RooftopError(.notFound, "no datastore \(id)") }
        return key
    }

    func object(_ key: ObjectKey, owner: String) -> ObjectSnapshot? {
        let stored = datastores[FakeServerState.datastoreKey(key.datastore, owner: owner)]?
            .objects["\(key.className)/\(key.objectId)"]
        return stored?.deleted == false ? stored?.snapshot : nil
    }

    mutating func hide(_ key: ObjectKey, owner: String, from user: String) {
        let datastore = FakeServerState.datastoreKey(key.datastore, owner: owner)
        let objectKey = "\(key.className)/\(key.objectId)"
        guard datastores[datastore]?.objects[objectKey] != nil else { return }
        sequence += 1
        datastores[datastore]?.objects[objectKey]?.hiddenFrom.insert(user)
        datastores[datastore]?.objects[objectKey]?.sequence = sequence
    }

    // MARK: Pull and operations

    mutating func pull(_ request: PullRequest, user: String?) throws(RooftopError) -> PullResponse {
        let key = try datastore(request.datastore, user: user)
        if let pages = pagesBeforeInterruption {
            guard pages > 0 else {
                pagesBeforeInterruption = nil
                throw RooftopError(.network, "the connection dropped (fake server)")
            }
            pagesBeforeInterruption = pages - 1
        }
        let since = request.since.flatMap { Int64($0.rawValue.dropFirst(2)) } ?? 0
        let limit = request.limit ?? pageSize
        let rows = (datastores[key]?.objects.values ?? [:].values)
            .filter { $0.sequence > since && (request.classes?.contains($0.snapshot.className) ?? true) }
            .sorted { $0.sequence < $1.sequence }
        let page = rows.prefix(limit)
        let changes = page.map { object -> PullChange in
            let snapshot = object.snapshot
            if object.deleted {
                return .tombstone(className: snapshot.className, objectId: snapshot.objectId, version: snapshot.version)
            }
            if let user, object.hiddenFrom.contains(user) {
                return .removal(className: snapshot.className, objectId: snapshot.objectId)
            }
            return .upsert(snapshot)
        }
        let last = page.last?.sequence ?? since
        return PullResponse(
            changes: changes, checkpoint: Checkpoint("c:\(last)"), hasMore: rows.count > page.count,
            remaining: rows.count - page.count)
    }

    mutating func operations(_ key: ObjectKey, after version: Int64, user: String?) throws(RooftopError) -> [OperationRecord] {
        let datastore = try datastore(key.datastore, user: user)
        guard let object = datastores[datastore]?.objects["\(key.className)/\(key.objectId)"] else {
            throw RooftopError(.notFound, "no \(key.className) object \(key.objectId)")
        }
        return object.operations.filter { $0.version > version }
    }
}
