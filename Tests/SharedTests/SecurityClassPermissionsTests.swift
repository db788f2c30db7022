import Foundation
import RooftopShared
import Testing

struct RuleCase: Sendable, CustomTestStringConvertible {
    let name: String
    let rule: PermissionRule
    let context: AccessContext
    let allowed: Bool
    var testDescription: String { name }
}

@Suite("Class-level permissions")
struct SecurityClassPermissionsTests {
    static let admins = PermissionRule(principals: [.role("Readers")])
    static let adminsOrSignedIn = PermissionRule(principals: [.role("Readers")], requiresAuthentication: true)
    static let oneUser = PermissionRule(principals: [.user("u1")])

    static let cases: [RuleCase] = [
        RuleCase(name: "everyone / anonymous", rule: .everyone, context: Callers.anonymous, allowed: true),
        RuleCase(name: "everyone / user", rule: .everyone, context: Callers.other, allowed: true),
        RuleCase(name: "authenticated / anonymous", rule: .authenticated, context: Callers.anonymous, allowed: false),
        RuleCase(name: "authenticated / user", rule: .authenticated, context: Callers.other, allowed: true),
        RuleCase(name: "nobody / user", rule: .nobody, context: Callers.owner, allowed: false),
        RuleCase(name: "nobody / admin", rule: .nobody, context: Callers.admin, allowed: true),
        RuleCase(name: "role / child role member", rule: admins, context: Callers.childRoleMember, allowed: true),
        RuleCase(name: "role / other user", rule: admins, context: Callers.other, allowed: false),
        RuleCase(name: "role or signed in / other user", rule: adminsOrSignedIn, context: Callers.other, allowed: true),
        RuleCase(
            name: "role or signed in / anonymous", rule: adminsOrSignedIn, context: Callers.anonymous, allowed: false),
        RuleCase(name: "one user / that user", rule: oneUser, context: Callers.owner, allowed: true),
        RuleCase(name: "one user / other user", rule: oneUser, context: Callers.other, allowed: false),
        RuleCase(name: "one user / anonymous", rule: oneUser, context: Callers.anonymous, allowed: false),
    ]

    @Test(arguments: cases)
    func ruleTable(_ entry: RuleCase) {
        #expect(entry.rule.allows(entry.context) == entry.allowed)
    }

    @Test func defaultIsAllOpen() {
        for operation in AccessOperation.allCases {
            #expect(ClassPermissions().allows(operation, for: .anonymous))
        }
    }

    @Test func eachOperationHasItsOwnRule() {
        for operation in AccessOperation.allCases {
            var permissions = ClassPermissions()
            permissions[operation] = .authenticated
            for other in AccessOperation.allCases {
                #expect(permissions.allows(other, for: .anonymous) == (other != operation))
                #expect(permissions.allows(other, for: Callers.other))
            }
        }
    }

    @Test func parseWireForm() throws {
        let json = """
            {"get": {"*": true}, "find": {"requiresAuthentication": true, "role:Readers": true},
             "create": {"u1": true, "u2": false}, "delete": {},
             "defaultACL": {"policy": "explicit", "acl": {"role:Staff": {"read": true}}}}
            """
        let permissions = try JSONDecoder().decode(ClassPermissions.self, from: Data(json.utf8))
        #expect(permissions.get == .everyone)
        #expect(permissions.find == PermissionRule(principals: [.role("Readers")], requiresAuthentication: true))
        #expect(permissions.create == PermissionRule(principals: [.user("u1")]))
        #expect(permissions.delete == .nobody)
        #expect(permissions.count == .everyone)  // missing: open, as in Parse
        #expect(permissions.update == .everyone)
        #expect(permissions.defaultACL == .explicit(ACL([.role("Staff"): .init(read: true)])))
        let again = try JSONDecoder().decode(ClassPermissions.self, from: try JSONEncoder().encode(permissions))
        #expect(again == permissions)
        #expect(try JSONDecoder().decode(ClassPermissions.self, from: Data("{}".utf8)) == ClassPermissions())
    }

    @Test func encodedRule() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let rule = PermissionRule(principals: [.role("Admins"), .everyone], requiresAuthentication: true)
        let text = String(decoding: try encoder.encode(rule), as: UTF8.self)
        #expect(text == #"{"*":true,"requiresAuthentication":true,"role:Admins":true}"#)
        #expect(String(decoding: try encoder.encode(PermissionRule.nobody), as: UTF8.self) == "{}")
    }

    @Test func badWireForms() {
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(PermissionRule.self, from: Data(#"{"role:": true}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(PermissionRule.self, from: Data(#"{"*": "yes"}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(DefaultACL.self, from: Data(#"{"policy": "everyoneButBob"}"#.utf8))
        }
    }
}
