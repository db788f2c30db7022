import RooftopShared
import Testing

/// ``AccessPolicy/mayReadHistory(_:currentACL:context:fromCreation:)``: who may see an object's
/// changes (and merge decisions drawn from them).
@Suite("Access policy: reading an object's history")
struct SecurityHistoryTests {
    static let alice = AccessContext(userId: "alice")
    static let bob = AccessContext(userId: "bob")
    static let both = ACL([.user("alice"): .readWrite, .user("bob"): ACL.Access(read: true)])

    static func update(_ version: Int64, acl: ACL? = nil) -> OperationRecord {
        OperationRecord(version: version, change: .update([FieldUpdate("f", .set(.int(version)))], acl: acl), priorValues: ["f": nil])
    }

    static func delete(_ version: Int64) -> OperationRecord {
        OperationRecord(version: version, change: .delete, priorValues: ["f": .int(version - 1)])
    }

    @Test("field changes under an unchanged readable ACL are readable; an unreadable ACL is not")
    func plainChanges() {
        let records = [Self.update(2), Self.update(3)]
        #expect(AccessPolicy.mayReadHistory(records, currentACL: Self.both, context: Self.bob))
        #expect(!AccessPolicy.mayReadHistory(records, currentACL: .only("alice"), context: Self.bob))
        #expect(AccessPolicy.mayReadHistory(records, currentACL: nil, context: .anonymous), "no ACL: everyone reads")
        #expect(AccessPolicy.mayReadHistory([], currentACL: Self.both, context: Self.bob))
    }

    @Test("a change that set the ACL hides the history, except a creation's first ACL, and for the admin key")
    func aclChanges() {
        let widened = [Self.update(2), Self.update(3, acl: Self.both)]
        #expect(!AccessPolicy.mayReadHistory(widened, currentACL: Self.both, context: Self.bob))
        #expect(!AccessPolicy.mayReadHistory(widened, currentACL: Self.both, context: Self.alice), "the same rule for all")
        #expect(AccessPolicy.mayReadHistory(widened, currentACL: Self.both, context: .admin))
        let created = [Self.update(4, acl: Self.both), Self.update(5)]
        #expect(AccessPolicy.mayReadHistory(created, currentACL: Self.both, context: Self.bob, fromCreation: true))
        #expect(!AccessPolicy.mayReadHistory(created, currentACL: Self.both, context: Self.bob, fromCreation: false))
    }

    @Test("a delete may end the history (the current version is its tombstone), never come before its end")
    func deletes() {
        let deleted = [Self.update(2), Self.delete(3)]
        #expect(AccessPolicy.mayReadHistory(deleted, currentACL: Self.both, context: Self.bob))
        #expect(!AccessPolicy.mayReadHistory(deleted, currentACL: .only("alice"), context: Self.bob))
        let recreated = [Self.delete(3), Self.update(4)]
        #expect(!AccessPolicy.mayReadHistory(recreated, currentACL: Self.both, context: Self.bob))
        #expect(AccessPolicy.mayReadHistory(recreated, currentACL: Self.both, context: .admin))
    }
}
