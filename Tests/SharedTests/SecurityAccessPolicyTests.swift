import RooftopShared
import Testing

struct DecisionCase: Sendable, CustomTestStringConvertible {
    let name: String
    let operation: AccessOperation
    var context: AccessContext = Callers.owner
    var permissions: ClassPermissions = ClassPermissions()
    var role: SharingRole = .editor
    var acl: ACL? = ACL.only("u1")
    /// `nil` when allowed, otherwise the layer named in the message.
    let refusedBy: String?
    var testDescription: String { name }
}

@Suite("Access policy: datastore role, class permission and object ACL together")
struct SecurityAccessPolicyTests {
    static let noUpdates = ClassPermissions(update: .nobody)
    static let signedInFinds = ClassPermissions(find: .authenticated)

    static let cases: [DecisionCase] = [
        // Every layer allows.
        DecisionCase(name: "all allow: update", operation: .update, refusedBy: nil),
        DecisionCase(name: "all allow: get", operation: .get, refusedBy: nil),
        DecisionCase(name: "all allow: delete", operation: .delete, refusedBy: nil),
        DecisionCase(name: "viewer may get", operation: .get, role: .viewer, refusedBy: nil),
        DecisionCase(name: "viewer may count", operation: .count, role: .viewer, refusedBy: nil),
        // The datastore role refuses alone.
        DecisionCase(name: "viewer may not update", operation: .update, role: .viewer, refusedBy: "datastore role"),
        DecisionCase(
            name: "viewer may not create", operation: .create, role: .viewer, acl: nil, refusedBy: "datastore role"),
        DecisionCase(name: "none may not get", operation: .get, role: .none, refusedBy: "datastore role"),
        // The class permission refuses alone.
        DecisionCase(
            name: "class forbids update", operation: .update, permissions: noUpdates, refusedBy: "class permission"),
        DecisionCase(
            name: "class needs sign-in to find", operation: .find, context: Callers.anonymous,
            permissions: signedInFinds,
            acl: nil, refusedBy: "class permission"),
        // The object ACL refuses alone.
        DecisionCase(
            name: "ACL forbids other's update", operation: .update, context: Callers.other, refusedBy: "object ACL"),
        DecisionCase(name: "ACL forbids other's get", operation: .get, context: Callers.other, refusedBy: "object ACL"),
        DecisionCase(
            name: "ACL read-only for role member", operation: .delete, context: Callers.childRoleMember,
            acl: ACL([.role("Readers"): .init(read: true)]), refusedBy: "object ACL"),
        DecisionCase(
            name: "ACL read for role member", operation: .get, context: Callers.childRoleMember,
            acl: ACL([.role("Readers"): .init(read: true)]), refusedBy: nil),
        // create has no existing ACL; nil ACL is unrestricted.
        DecisionCase(name: "create ignores ACL", operation: .create, context: Callers.other, refusedBy: nil),
        DecisionCase(name: "nil ACL", operation: .delete, context: Callers.other, acl: nil, refusedBy: nil),
        // Admin passes everything.
        DecisionCase(
            name: "admin passes all layers", operation: .delete, context: Callers.admin,
            permissions: ClassPermissions(delete: .nobody), role: .none, acl: ACL(), refusedBy: nil),
    ]

    @Test(arguments: cases)
    func decisionTable(_ entry: DecisionCase) {
        let allowed = AccessPolicy.allows(
            entry.operation, className: "GameScore", context: entry.context, classPermissions: entry.permissions,
            datastoreRole: entry.role, acl: entry.acl)
        #expect(allowed == (entry.refusedBy == nil))
        do {
            try AccessPolicy.check(
                entry.operation, className: "GameScore", context: entry.context,
                classPermissions: entry.permissions, datastoreRole: entry.role, acl: entry.acl)
            #expect(entry.refusedBy == nil)
        } catch {
            #expect(error.code == .disallowed)
            if let layer = entry.refusedBy { #expect(error.message.hasPrefix(layer), "\(error.message)") }
            // The message never shows the ACL's entries.
            #expect(!error.message.contains("u1"))
        }
    }

    @Test func layersAreCheckedInOrder() {
        // Role, permission and ACL all refuse: the datastore role is named.
        let error = #expect(throws: RooftopError.self) {
            try AccessPolicy.check(
                .update, className: "GameScore", context: Callers.other, classPermissions: Self.noUpdates,
                datastoreRole: .viewer, acl: ACL.only("u1"))
        }
        #expect(error?.message.hasPrefix("datastore role") == true)
        let second = #expect(throws: RooftopError.self) {
            try AccessPolicy.check(
                .update, className: "GameScore", context: Callers.other, classPermissions: Self.noUpdates,
                datastoreRole: .editor, acl: ACL.only("u1"))
        }
        #expect(second?.message.hasPrefix("class permission") == true)
    }

    @Test func canReadFiltersResults() {
        let objects = [
            ObjectSnapshot(className: "Note", objectId: "a", fields: ["text": "mine"], acl: .only("u1")),
            ObjectSnapshot(className: "Note", objectId: "b", fields: ["text": "public"], acl: nil),
            ObjectSnapshot(
                className: "Note", objectId: "c", fields: ["text": "readers"],
                acl: ACL([.role("Readers"): .init(read: true)])),
            ObjectSnapshot(
                className: "Note", objectId: "d", fields: ["text": "write only"],
                acl: ACL([.user("u2"): .init(write: true)])),
        ]
        func visible(
            _ context: AccessContext, _ permissions: ClassPermissions = ClassPermissions(), role: SharingRole = .viewer
        )
            -> [String]
        {
            objects.filter {
                AccessPolicy.canRead($0, context: context, classPermissions: permissions, datastoreRole: role)
            }.map(\.objectId)
        }
        #expect(visible(Callers.owner) == ["a", "b"])
        #expect(visible(Callers.other) == ["b"])
        #expect(visible(Callers.childRoleMember) == ["b", "c"])
        #expect(visible(Callers.anonymous) == ["b"])
        #expect(visible(Callers.admin) == ["a", "b", "c", "d"])
        #expect(visible(Callers.owner, role: .none).isEmpty)
        #expect(visible(Callers.anonymous, Self.signedInFinds).isEmpty)
        #expect(visible(Callers.other, Self.signedInFinds) == ["b"])
    }
}
