import PropertyBased
import RooftopShared
import Testing

@Suite("Role graph")
struct SecurityRoleGraphTests {
    @Test func directAndInheritedRoles() {
        // Admins are Moderators, Moderators are Members.
        let graph = RoleGraph(
            users: ["Admins": ["a"], "Moderators": ["m"], "Members": ["x"]],
            childRoles: ["Moderators": ["Admins"], "Members": ["Moderators"]])
        #expect(graph.effectiveRoles(ofUser: "a") == ["Admins", "Moderators", "Members"])
        #expect(graph.effectiveRoles(ofUser: "m") == ["Moderators", "Members"])
        #expect(graph.effectiveRoles(ofUser: "x") == ["Members"])
        #expect(graph.effectiveRoles(ofUser: "nobody").isEmpty)
        #expect(graph.members(of: "Members") == ["a", "m", "x"])
        #expect(graph.members(of: "Admins") == ["a"])
        #expect(graph.isMember("a", of: "Members"))
        #expect(!graph.isMember("x", of: "Admins"))
        #expect(graph.effectiveRoles(ofRole: "Admins") == ["Admins", "Moderators", "Members"])
    }

    @Test func cyclesTerminateWithTheRightAnswer() {
        // A in B, B in C, C in A: a cycle; D contains A from outside.
        let graph = RoleGraph(
            users: ["A": ["ua"], "C": ["uc"], "E": ["ue"]],
            childRoles: ["B": ["A"], "C": ["B"], "A": ["C"], "D": ["A"], "E": ["E"]])
        #expect(graph.effectiveRoles(ofUser: "ua") == ["A", "B", "C", "D"])
        #expect(graph.effectiveRoles(ofUser: "uc") == ["A", "B", "C", "D"])
        #expect(graph.effectiveRoles(ofUser: "ue") == ["E"])
        #expect(graph.members(of: "B") == ["ua", "uc"])
        #expect(graph.members(of: "D") == ["ua", "uc"])
    }

    @Test func deepChainsDoNotOverflow() {
        // R0 in R1 in R2 ... in R9999; the user is in R0 and holds all of them.
        let depth = 10_000
        var children: [String: Set<String>] = [:]
        for index in 1..<depth { children["R\(index)"] = ["R\(index - 1)"] }
        let graph = RoleGraph(users: ["R0": ["u"]], childRoles: children)
        let roles = graph.effectiveRoles(ofUser: "u")
        #expect(roles.count == depth)
        #expect(roles.contains("R\(depth - 1)"))
        #expect(graph.members(of: "R\(depth - 1)") == ["u"])
    }

    @Test func fromRoleInfos() {
        let graph = RoleGraph(roles: [
            RoleInfo(name: "Staff", users: ["s1"], roles: ["Managers"]),
            RoleInfo(name: "Managers", users: ["m1"]),
        ])
        #expect(graph.effectiveRoles(ofUser: "m1") == ["Managers", "Staff"])
        #expect(AccessContext(userId: "m1", roleGraph: graph).holds(.role("Staff")))
    }

    /// Random graphs over 6 roles and 4 users (cycles included) agree with a naive fixpoint.
    @Test func matchesNaiveFixpoint() async {
        let edges = Gen.int(in: 0...35).array(of: 0...20)  // parent * 6 + child
        let memberships = Gen.int(in: 0...23).array(of: 0...10)  // role * 4 + user
        await propertyCheck(input: edges, memberships) { edges, memberships in
            var children: [String: Set<String>] = [:]
            for edge in edges { children["R\(edge / 6)", default: []].insert("R\(edge % 6)") }
            var users: [String: Set<String>] = [:]
            for membership in memberships { users["R\(membership / 4)", default: []].insert("u\(membership % 4)") }
            let graph = RoleGraph(users: users, childRoles: children)
            for user in (0..<4).map({ "u\($0)" }) {
                // Naive: repeat "a role containing a held role is held" until nothing changes.
                var held = Set(users.filter { $0.value.contains(user) }.keys)
                var changed = true
                while changed {
                    changed = false
                    for (parent, kids) in children where !held.contains(parent) && !kids.isDisjoint(with: held) {
                        held.insert(parent)
                        changed = true
                    }
                }
                #expect(graph.effectiveRoles(ofUser: user) == held)
                for role in held { #expect(graph.members(of: role).contains(user)) }
            }
        }
    }
}
