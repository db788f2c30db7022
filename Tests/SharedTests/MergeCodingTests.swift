import Foundation
import RooftopShared
import Testing

@Suite("Merge rules and decisions on the wire")
struct MergeCodingTests {
    private func roundTrip<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }

    @Test func rulesAreTheirNames() throws {
        for rule in MergeRule.allCases {
            #expect(String(decoding: try JSONEncoder().encode(rule), as: UTF8.self) == "\"\(rule.rawValue)\"")
        }
        #expect(MergeRule.allCases.map(\.rawValue) == ["remote", "local", "max", "min", "sum"])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(MergeRule.self, from: Data("\"last\"".utf8)) }
    }

    @Test func rulesPerClassAndFieldWithADefault() throws {
        var rules = MergeRules()
        #expect(rules.rule(forClass: "Game", field: "score") == .remote)
        rules.setRule(.sum, forClass: "Game", field: "score")
        rules.setRule(.max, forClass: "Game", field: "best")
        #expect(rules.rule(forClass: "Game", field: "score") == .sum)
        #expect(rules.rule(forClass: "Other", field: "score") == .remote)
        rules.defaultRule = .local
        #expect(rules.rule(forClass: "Game", field: "name") == .local)
        rules.setRule(nil, forClass: "Game", field: "score")
        rules.setRule(nil, forClass: "Game", field: "best")
        #expect(rules.classes.isEmpty)
    }

    @Test func rulesRoundTripAndDefaultWhenMembersAreMissing() throws {
        let rules = MergeRules(default: .min, classes: ["Game": ["score": .sum]])
        #expect(try roundTrip(rules) == rules)
        let decoded = try JSONDecoder().decode(
            MergeRules.self, from: Data(#"{"classes": {"Game": {"best": "max"}}}"#.utf8))
        #expect(decoded == MergeRules(default: .remote, classes: ["Game": ["best": .max]]))
        #expect(try JSONDecoder().decode(MergeRules.self, from: Data("{}".utf8)) == MergeRules())
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MergeRules.self, from: Data(#"{"default": "newest"}"#.utf8))
        }
    }

    @Test func decisionsKeepNullApartFromAbsent() throws {
        let decision = MergeDecision(
            field: "score", baseValue: nil, localValue: .null, remoteValue: 2.5, rule: .max, result: 2.5,
            resolution: .rule)
        #expect(try roundTrip(decision) == decision)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(decision)) as? [String: Any]
        #expect(json?.keys.sorted() == ["field", "local", "remote", "resolution", "result", "rule"])
        #expect(json?["local"] is NSNull)
        #expect(json?["resolution"] as? String == "rule")
    }
}
