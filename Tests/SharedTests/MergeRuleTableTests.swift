import RooftopShared
import Testing

/// One cell of the rule table documented on `FieldMerge`: a field changed on both sides.
struct MergeTableRow: Sendable, CustomTestStringConvertible {
    var rule: MergeRule
    var base: Value?
    var remote: [FieldOperation]
    var local: [FieldOperation]
    var expected: Value?
    var resolution: MergeDecision.Resolution = .rule

    var testDescription: String {
        "\(rule): base \(base.map(\.description) ?? "absent"), remote \(remote.map(\.name)), local \(local.map(\.name))"
    }
}

private let users = "_User"
private func relation(_ ids: String...) -> Value { .relation(Relation(className: users, objectIds: ids)) }

/// The table, with base 10 and a local `increment(5)` (L = 15) for the scalar columns.
private let tableRows: [MergeTableRow] = {
    var rows: [MergeTableRow] = []
    func row(
        _ rule: MergeRule, _ base: Value?, _ remote: [FieldOperation], _ local: [FieldOperation], _ expected: Value?,
        _ resolution: MergeDecision.Resolution = .rule
    ) {
        rows.append(
            MergeTableRow(
                rule: rule, base: base, remote: remote, local: local, expected: expected, resolution: resolution))
    }
    let inc5: [FieldOperation] = [.increment(5)]
    // Column "set": remote set 20.
    row(.remote, 10, [.set(20)], inc5, 25)
    row(.local, 10, [.set(20)], inc5, 15)
    row(.max, 10, [.set(20)], inc5, 20)
    row(.min, 10, [.set(20)], inc5, 15)
    row(.sum, 10, [.set(20)], inc5, 25)
    // Column "unset".
    row(.remote, 10, [.unset], inc5, 5)
    row(.local, 10, [.unset], inc5, 15)
    row(.max, 10, [.unset], inc5, 15)
    row(.min, 10, [.unset], inc5, 15)
    row(.sum, 10, [.unset], inc5, 5)
    // Column "increment": remote increment 3 (R = 13).
    row(.remote, 10, [.increment(3)], inc5, 18)
    row(.local, 10, [.increment(3)], inc5, 15)
    row(.max, 10, [.increment(3)], inc5, 15)
    row(.min, 10, [.increment(3)], inc5, 13)
    row(.sum, 10, [.increment(3)], inc5, 18)
    // Column "list ops" against a local non-list change: by rule (a list sorts after numbers).
    row(.remote, nil, [.listAppend([1])], inc5, [1])
    row(.local, nil, [.listAppend([1])], inc5, 5)
    row(.max, nil, [.listAppend([1])], inc5, [1])
    row(.min, nil, [.listAppend([1])], inc5, 5)
    row(.sum, nil, [.listAppend([1])], inc5, [1])
    // Column "relation ops" against a local non-relation change: by rule (a relation sorts after numbers).
    let addA: [FieldOperation] = [.relationAdd(className: users, objectIds: ["a"])]
    row(.remote, nil, addA, inc5, relation("a"))
    row(.local, nil, addA, inc5, 5)
    row(.max, nil, addA, inc5, relation("a"))
    row(.min, nil, addA, inc5, 5)
    row(.sum, nil, addA, inc5, relation("a"))
    for rule in MergeRule.allCases {
        // List ops against list ops: transformed whatever the rule.
        row(rule, ["a"], [.listInsert(index: 0, value: "r")], [.listAppend(["l"])], ["r", "a", "l"], .listTransform)
        // Relation ops against relation ops: remote then local, whatever the rule.
        row(
            rule, relation("a", "b"),
            [.relationRemove(className: users, objectIds: ["a"]), .relationAdd(className: users, objectIds: ["c"])],
            [.relationAdd(className: users, objectIds: ["a"]), .relationRemove(className: users, objectIds: ["b"])],
            relation("a", "c"), .relationSet)
    }
    // Footnote 4: a local unset loses under max and min, wins under local, is dropped under sum.
    row(.max, 10, [.set(20)], [.unset], 20)
    row(.min, 10, [.set(20)], [.unset], 20)
    row(.local, 10, [.set(20)], [.unset], nil)
    row(.sum, 10, [.set(20)], [.unset], 20)
    // Footnote 5: sum of non-numbers acts as remote; sum of a local set adds L − B; doubles; overflow.
    row(.sum, "a", [.set("b")], [.set("c")], "b")
    row(.sum, 10, [.set(20)], [.set(12)], 22)
    row(.sum, 10, [.increment(1)], [.set("x")], 11)
    row(.sum, 1.5, [.increment(1)], [.increment(0.25)], 2.75)
    row(.sum, 0, [.set(.int(.max))], inc5, .int(.max))
    // Footnote 6: under remote, local increments add to a remote number; other local changes and
    // remote non-numbers leave R; an overflow leaves R.
    row(.remote, 10, [.set(20)], [.increment(5), .set(1)], 20)
    row(.remote, 10, [.set("x")], inc5, "x")
    row(.remote, 0, [.set(.int(.max))], inc5, .int(.max))
    row(.remote, 1.5, [.increment(1)], [.increment(0.25), .increment(1)], 3.75)
    // Ties keep the remote value.
    row(.max, 0, [.set(1)], [.set(1.0)], 1)
    row(.min, 0, [.set(1.0)], [.set(1)], 1.0)
    // Two absent values: nothing to pick.
    row(.max, 10, [.unset], [.unset], nil)
    return rows
}()

@Suite("Merge rule table")
struct MergeRuleTableTests {
    @Test(arguments: tableRows)
    func tableRow(_ row: MergeTableRow) throws {
        let merged = try FieldMerge.rebase(
            field: "f", base: row.base, local: row.local, over: row.remote, rule: row.rule)
        let remoteValue = try FieldOperation.apply(row.remote, to: row.base)
        // Identity (==), not just equivalence: an int must stay an int.
        #expect(try FieldOperation.apply(merged.operations, to: remoteValue) == row.expected)
        let decision = try #require(merged.decision)
        #expect(decision.result == row.expected)
        #expect(decision.resolution == row.resolution)
        #expect(decision.rule == row.rule)
        #expect(decision.baseValue == row.base)
        #expect(decision.remoteValue == remoteValue)
        #expect(decision.localValue == (try FieldOperation.apply(row.local, to: row.base)))
    }

    @Test(arguments: MergeRule.allCases)
    func withoutAConcurrentRemoteOperationLocalOperationsApplyUnchanged(rule: MergeRule) throws {
        let local: [FieldOperation] = [.increment(5), .set("x"), .unset, .listAppend([1]), .listRemove(index: 0)]
        let merged = try FieldMerge.rebase(field: "f", base: 10, local: local, over: [], rule: rule)
        #expect(merged.operations == local)
        #expect(merged.decision == nil)
    }

    @Test(arguments: MergeRule.allCases)
    func withoutLocalOperationsThereIsNothingToRebase(rule: MergeRule) throws {
        let merged = try FieldMerge.rebase(field: "f", base: 10, local: [], over: [.set(3)], rule: rule)
        #expect(merged.operations.isEmpty)
        #expect(merged.decision == nil)
    }

    @Test(arguments: MergeRule.allCases)
    func deleteColumnRemoteDeleteWins(rule: MergeRule) throws {
        let rules = MergeRules(default: rule)
        let merged = try ObjectMerge.rebase(
            local: [.update([FieldUpdate("f", .increment(5))])], over: [.delete], base: ["f": 10], className: "C",
            rules: rules)
        #expect(merged.change == nil)
        #expect(
            merged.decisions == [
                MergeDecision(
                    field: "f", baseValue: 10, localValue: 15, remoteValue: nil, rule: rule, result: nil,
                    resolution: .objectDeleted)
            ])
    }

    @Test(arguments: MergeRule.allCases)
    func deleteColumnLocalDeleteWins(rule: MergeRule) throws {
        let rules = MergeRules(default: rule)
        let merged = try ObjectMerge.rebase(
            local: [.update([FieldUpdate("g", .set(1))]), .delete], over: [.update([FieldUpdate("f", .set(20))])],
            base: ["f": 10], className: "C", rules: rules)
        #expect(merged.change == .delete)
        #expect(
            merged.decisions == [
                MergeDecision(
                    field: "f", baseValue: 10, localValue: nil, remoteValue: 20, rule: rule, result: nil,
                    resolution: .objectDeleted)
            ])
    }

    @Test func localOperationsThatDoNotApplyToTheBaseAreRejected() {
        expectOperationError(.badType) {
            try FieldMerge.rebase(field: "f", base: "text", local: [.increment(1)], over: [.set(1)], rule: .sum)
        }
        expectOperationError(.badIndex) {
            try FieldMerge.rebase(field: "f", base: [1], local: [.listRemove(index: 1)], over: [], rule: .remote)
        }
    }
}
