import Foundation
import RooftopShared

/// The callers of the access-control matrix.
enum Caller: String, CaseIterable, Sendable, CustomStringConvertible {
    case anonymous, owner, other, member, childMember, grantee, admin

    var description: String { rawValue }
}

/// The kinds of object ACLs of the matrix.
enum ObjectKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// No ACL given: the class default, creator only.
    case creatorOnly
    /// Everyone reads; the owner writes.
    case publicRead
    /// A role reads and writes (and so its child role's members); the owner too.
    case roleReadWrite
    /// An explicit grant of read and write to one other user.
    case userGrant
    /// An explicit grant of read only to one other user.
    case userReadGrant

    var description: String { rawValue }

    /// Who may read an object of this kind.
    var readers: Set<Caller> {
        switch self {
        case .creatorOnly: [.owner, .admin]
        case .publicRead: Set(Caller.allCases)
        case .roleReadWrite: [.owner, .member, .childMember, .admin]
        case .userGrant, .userReadGrant: [.owner, .grantee, .admin]
        }
    }

    /// Who may update or delete an object of this kind.
    var writers: Set<Caller> {
        switch self {
        case .creatorOnly, .publicRead, .userReadGrant: [.owner, .admin]
        case .roleReadWrite: [.owner, .member, .childMember, .admin]
        case .userGrant: [.owner, .grantee, .admin]
        }
    }
}

/// Fresh users and roles for one test: an owner who creates the objects, an unrelated user, a
/// direct member of a role, a member of a child role of it, and a user granted access by ID.
struct AccessMatrix: Sendable {
    let client: APIClient
    let owner: TestUser
    let other: TestUser
    let member: TestUser
    let childMember: TestUser
    let grantee: TestUser
    /// The role that `roleReadWrite` objects name.
    let role: String
    /// A child role of ``role`` (its members are members of ``role``).
    let childRole: String

    static func make(_ client: APIClient) async throws -> AccessMatrix {
        let owner = try await client.newUser("owner")
        let other = try await client.newUser("other")
        let member = try await client.newUser("member")
        let childMember = try await client.newUser("child")
        let grantee = try await client.newUser("grantee")
        let childRole = Unique.name("Juniors")
        let role = Unique.name("Readers")
        try await client.createRole(childRole, users: [childMember])
        try await client.createRole(role, users: [member], roles: [childRole])
        return AccessMatrix(
            client: client, owner: owner, other: other, member: member, childMember: childMember, grantee: grantee,
            role: role, childRole: childRole)
    }

    /// The user behind a caller (`nil` for anonymous and admin).
    func user(_ caller: Caller) -> TestUser? {
        switch caller {
        case .anonymous, .admin: nil
        case .owner: owner
        case .other: other
        case .member: member
        case .childMember: childMember
        case .grantee: grantee
        }
    }

    /// The ACL an object of a kind is created with (`nil`: the class default).
    func acl(_ kind: ObjectKind) -> ACL? {
        switch kind {
        case .creatorOnly: nil
        case .publicRead: .of((.everyone, read: true, write: false), (owner.principal, read: true, write: true))
        case .roleReadWrite: .of((.role(role), read: true, write: true), (owner.principal, read: true, write: true))
        case .userGrant: .of((owner.principal, read: true, write: true), (grantee.principal, read: true, write: true))
        case .userReadGrant: .of((owner.principal, read: true, write: true), (grantee.principal, read: true, write: false))
        }
    }

    /// Creates one object of each kind in `className`, as the owner; field `kind` names the kind.
    func createObjects(in className: String, datastore: DatastoreID = .app) async throws -> [ObjectKind: ObjectSnapshot] {
        var objects: [ObjectKind: ObjectSnapshot] = [:]
        for kind in ObjectKind.allCases {
            objects[kind] = try await client.create(
                className, in: datastore, fields: ["kind": .string(kind.rawValue)], acl: acl(kind), as: owner)
        }
        return objects
    }

    // Requests made as a caller.

    func get(_ object: ObjectSnapshot, include: String? = nil, as caller: Caller) async throws -> APIClient.Reply {
        try await client.get(object, include: include, as: user(caller), admin: caller == .admin)
    }

    func update(_ object: ObjectSnapshot, fields: [String: Value], acl: ACL? = nil, as caller: Caller) async throws
        -> APIClient.Reply
    {
        try await client.update(object, fields: fields, acl: acl, as: user(caller), admin: caller == .admin)
    }

    func delete(_ object: ObjectSnapshot, as caller: Caller) async throws -> APIClient.Reply {
        try await client.delete(object, as: user(caller), admin: caller == .admin)
    }

    func find(_ query: Query, as caller: Caller) async throws -> QueryResponse {
        try await client.find(query, as: user(caller), admin: caller == .admin)
    }

    func pull(_ className: String, since: Checkpoint? = nil, datastore: DatastoreID = .app, as caller: Caller)
        async throws -> (changes: [PullChange], checkpoint: Checkpoint)
    {
        try await client.pullAll(datastore, since: since, classes: [className], as: user(caller), admin: caller == .admin)
    }

    func count(_ query: Query, as caller: Caller) async throws -> Int {
        try await client.count(query, as: user(caller), admin: caller == .admin)
    }
}
