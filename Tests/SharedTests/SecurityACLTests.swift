import RooftopShared
import Testing

/// The callers used by the ACL and policy tables.
enum Callers {
    /// Interns are Readers: `u3` reads through the child role.
    static let graph = RoleGraph(users: ["Interns": ["u3"], "Writers": ["u4"]], childRoles: ["Readers": ["Interns"]])
    static let anonymous = AccessContext.anonymous
    static let owner = AccessContext(userId: "u1", roleGraph: graph)
    static let other = AccessContext(userId: "u2", roleGraph: graph)
    static let childRoleMember = AccessContext(userId: "u3", roleGraph: graph)
    static let writer = AccessContext(userId: "u4", roleGraph: graph)
    static let admin = AccessContext.admin
}

struct ACLCase: Sendable, CustomTestStringConvertible {
    let name: String
    let acl: ACL?
    let context: AccessContext
    let read: Bool
    let write: Bool
    var testDescription: String { name }
}

@Suite("ACL evaluation")
struct SecurityACLTests {
    static let mixed = ACL([
        .user("u1"): .init(read: true, write: true),
        .role("Readers"): .init(read: true),
        .role("Writers"): .init(write: true),
    ])
    static let publicRead = ACL([.everyone: .init(read: true), .user("u1"): .init(write: true)])

    static let cases: [ACLCase] = [
        ACLCase(name: "mixed / anonymous", acl: mixed, context: Callers.anonymous, read: false, write: false),
        ACLCase(name: "mixed / user", acl: mixed, context: Callers.owner, read: true, write: true),
        ACLCase(name: "mixed / other user", acl: mixed, context: Callers.other, read: false, write: false),
        ACLCase(
            name: "mixed / member via child role", acl: mixed, context: Callers.childRoleMember, read: true,
            write: false),
        ACLCase(name: "mixed / write-only role", acl: mixed, context: Callers.writer, read: false, write: true),
        ACLCase(name: "mixed / admin", acl: mixed, context: Callers.admin, read: true, write: true),
        ACLCase(name: "public read / anonymous", acl: publicRead, context: Callers.anonymous, read: true, write: false),
        ACLCase(name: "public read / other user", acl: publicRead, context: Callers.other, read: true, write: false),
        ACLCase(name: "public read / user", acl: publicRead, context: Callers.owner, read: true, write: true),
        ACLCase(name: "empty / user", acl: ACL(), context: Callers.owner, read: false, write: false),
        ACLCase(name: "empty / admin", acl: ACL(), context: Callers.admin, read: true, write: true),
        ACLCase(name: "nil / anonymous", acl: nil, context: Callers.anonymous, read: true, write: true),
        ACLCase(name: "nil / other user", acl: nil, context: Callers.other, read: true, write: true),
    ]

    @Test(arguments: cases)
    func table(_ entry: ACLCase) {
        #expect(ACL.allowsRead(entry.acl, for: entry.context) == entry.read)
        #expect(ACL.allowsWrite(entry.acl, for: entry.context) == entry.write)
        if let acl = entry.acl {
            #expect(acl.allowsRead(for: entry.context) == entry.read)
            #expect(acl.allowsWrite(for: entry.context) == entry.write)
        }
    }

    @Test func principalsOfContexts() {
        #expect(Callers.anonymous.principals == [.everyone])
        #expect(Callers.childRoleMember.principals == [.everyone, .user("u3"), .role("Interns"), .role("Readers")])
        #expect(Callers.admin.isAdmin && !Callers.admin.isAuthenticated)
        // Roles without a user are dropped: an anonymous caller belongs to no role.
        let strange = AccessContext(userId: nil, roles: ["Readers"])
        #expect(strange.roles.isEmpty)
        #expect(!Self.mixed.allowsRead(for: strange))
    }

    @Test func userIdThatLooksLikeARoleDoesNotMatchTheRole() {
        let acl = ACL([.role("Readers"): .init(read: true)])
        #expect(!acl.allowsRead(for: AccessContext(userId: "role:Readers")))
    }
}

@Suite("Default ACL for new objects")
struct SecurityDefaultACLTests {
    @Test func creatorOnlyIsTheDefault() throws {
        #expect(ClassPermissions().defaultACL == .creatorOnly)
        let acl = try DefaultACL.creatorOnly.acl(forCreator: Callers.owner, className: "Note")
        #expect(acl == ACL.only("u1"))
        #expect(acl.allowsRead(for: Callers.owner) && acl.allowsWrite(for: Callers.owner))
        #expect(!acl.allowsRead(for: Callers.other))
        #expect(!acl.allowsRead(for: Callers.anonymous))
    }

    @Test func publicReadCreatorWrite() throws {
        let acl = try DefaultACL.publicReadCreatorWrite.acl(forCreator: Callers.owner, className: "Post")
        #expect(acl.allowsRead(for: Callers.anonymous) && !acl.allowsWrite(for: Callers.anonymous))
        #expect(acl.allowsWrite(for: Callers.owner) && !acl.allowsWrite(for: Callers.other))
    }

    @Test func publicAndExplicit() throws {
        #expect(try DefaultACL.publicReadWrite.acl(forCreator: Callers.other, className: "Wiki") == .publicReadWrite)
        let staff = ACL([.role("Staff"): .init(read: true, write: true)])
        #expect(try DefaultACL.explicit(staff).acl(forCreator: Callers.owner, className: "Ticket") == staff)
    }

    @Test func anonymousCreators() throws {
        // creatorOnly would leave nobody: refused.
        let error = #expect(throws: RooftopError.self) {
            try DefaultACL.creatorOnly.acl(forCreator: .anonymous, className: "Note")
        }
        #expect(error?.code == .disallowed)
        #expect(error?.message.contains("Note") == true)
        #expect(throws: RooftopError.self) {
            try DefaultACL.explicit(ACL()).acl(forCreator: .anonymous, className: "Note")
        }
        // publicReadCreatorWrite keeps its public part.
        let acl = try DefaultACL.publicReadCreatorWrite.acl(forCreator: .anonymous, className: "Post")
        #expect(acl == ACL([.everyone: .init(read: true)]))
        #expect(try DefaultACL.publicReadWrite.acl(forCreator: .anonymous, className: "Post") == .publicReadWrite)
        // An admin may create admin-only objects.
        #expect(try DefaultACL.creatorOnly.acl(forCreator: .admin, className: "Note") == ACL())
    }
}
