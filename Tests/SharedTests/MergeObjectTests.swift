@testable import RooftopShared
import Testing

@Suite("Merging object changes")
struct MergeObjectTests {
    private let rules = MergeRules(classes: ["Game": ["score": .sum, "best": .max]])

    private func rebase(
        _ local: [ObjectChange], over remote: [ObjectChange], base: [String: Value] = ["score": 10, "name": "a"]
    )
        throws -> ObjectMerge.Result
    {
        try ObjectMerge.rebase(local: local, over: remote, base: base, className: "Game", rules: rules)
    }

    @Test func fieldsMergeIndependentlyWithTheirOwnRules() throws {
        let merged = try rebase(
            [
                .update([
                    FieldUpdate("score", .increment(1)), FieldUpdate("name", .set("l")), FieldUpdate("best", .set(5)),
                ])
            ],
            over: [
                .update([
                    FieldUpdate("score", .increment(2)), FieldUpdate("name", .set("r")), FieldUpdate("best", .set(7)),
                ])
            ])
        #expect(merged.change == .update([FieldUpdate("score", .increment(1))]))
        #expect(merged.decisions.map(\.field) == ["score", "name", "best"])
        #expect(merged.decisions.map(\.result) == [13, "r", 7])
        #expect(merged.decisions.map(\.rule) == [.sum, .remote, .max])
    }

    @Test func untouchedFieldsPassThroughAndOperationsAreGroupedByField() throws {
        let merged = try rebase(
            [
                .update([FieldUpdate("tags", .listAppend(["x"])), FieldUpdate("name", .set("l"))]),
                .update([FieldUpdate("tags", .listAppend(["y"]))]),
            ],
            over: [.update([FieldUpdate("score", .increment(2))])])
        #expect(
            merged.change
                == .update([
                    FieldUpdate("tags", .listAppend(["x"])), FieldUpdate("tags", .listAppend(["y"])),
                    FieldUpdate("name", .set("l")),
                ]))
        #expect(merged.decisions.isEmpty)
    }

    @Test func withNoRemoteChangesTheLocalChangesAreCombinedAsTheyAre() throws {
        #expect(try rebase([.update([])], over: []).change == .update([]))
        #expect(try rebase([], over: []).change == nil)
        #expect(try rebase([.update([FieldUpdate("n", .set(1))]), .delete], over: []).change == .delete)
        let acl = ACL.only("u1")
        #expect(try rebase([.update([], acl: acl)], over: []).change == .update([], acl: acl))
    }

    @Test func everythingDroppedLeavesNoChange() throws {
        let merged = try rebase(
            [.update([FieldUpdate("name", .set("l"))])], over: [.update([FieldUpdate("name", .set("r"))])])
        #expect(merged.change == nil)
        #expect(merged.decisions.count == 1)
    }

    @Test func aRemoteACLWinsOverAConcurrentLocalOne() throws {
        let mine = ACL.only("me")
        let theirs = ACL.only("them")
        let kept = try rebase([.update([], acl: mine)], over: [.update([FieldUpdate("name", .set("r"))])])
        #expect(kept.change == .update([], acl: mine))
        let dropped = try rebase([.update([], acl: mine)], over: [.update([], acl: theirs)])
        #expect(dropped.change == nil)
    }

    @Test func deletesOnBothSidesAgree() throws {
        let merged = try rebase([.update([FieldUpdate("name", .set("l"))]), .delete], over: [.delete])
        #expect(merged.change == nil)
        #expect(merged.decisions.isEmpty)
    }

    @Test func aRemoteDeleteRecordsEveryLocallyChangedField() throws {
        let merged = try rebase(
            [.update([FieldUpdate("score", .increment(1)), FieldUpdate("extra", .set(true))])],
            over: [.update([FieldUpdate("name", .set("r"))]), .delete])
        #expect(merged.change == nil)
        #expect(merged.decisions.map(\.field) == ["score", "extra"])
        #expect(merged.decisions.map(\.localValue) == [11, true])
        #expect(
            merged.decisions.allSatisfy { $0.result == nil && $0.remoteValue == nil && $0.resolution == .objectDeleted }
        )
    }

    @Test func localChangesAfterALocalDeleteAreRejected() {
        expectOperationError(.invalidOperation) { try rebase([.delete, .update([])], over: []) }
        expectOperationError(.invalidOperation) { try rebase([.delete, .update([])], over: [.update([])]) }
    }

    @Test func changesMadeOnAnIncarnationThatWasDeletedAndCreatedAgainLoseToTheDelete() throws {
        let recreated: [ObjectChange] = [
            .update([FieldUpdate("name", .set("r"))]), .delete, .update([FieldUpdate("name", .set("new"))]),
        ]
        let merged = try rebase([.update([FieldUpdate("score", .increment(1))])], over: recreated)
        #expect(merged.change == nil, "nothing of the old incarnation's edit reaches the new one")
        #expect(merged.decisions.map(\.field) == ["score"])
        #expect(merged.decisions.allSatisfy { $0.resolution == .objectDeleted && $0.result == nil })
        #expect(try rebase([.delete], over: recreated).change == nil, "a delete of the old incarnation spares the new one")
        #expect(try rebase([], over: recreated).change == nil)
    }

    @Test func builtInAndInvalidFieldsAreRejectedWithTheirName() {
        let thrown = #expect(throws: RooftopError.self) {
            try rebase([.update([FieldUpdate("createdAt", .set(1))])], over: [])
        }
        #expect(thrown?.code == .invalidOperation)
        #expect(thrown?.field == "createdAt")
        expectOperationError(.illegalArgument) { try rebase([.update([FieldUpdate("bad name", .set(1))])], over: []) }
    }

    @Test func operationsThatDoNotApplyNameTheirField() {
        let thrown = #expect(throws: RooftopError.self) {
            try rebase(
                [.update([FieldUpdate("name", .increment(1))])], over: [.update([FieldUpdate("name", .set("r"))])])
        }
        #expect(thrown?.code == .badType)
        #expect(thrown?.field == "name")
    }

    @Test func bothSidesCreatingTheSameObjectMerge() throws {
        // Two devices create the record "settings" offline: both bases are empty.
        let merged = try ObjectMerge.rebase(
            local: [.update([FieldUpdate("theme", .set("dark")), FieldUpdate("launches", .increment(1))])],
            over: [.update([FieldUpdate("theme", .set("light")), FieldUpdate("launches", .increment(1))])],
            base: [:], className: "Settings", rules: MergeRules(classes: ["Settings": ["launches": .sum]]))
        #expect(merged.change == .update([FieldUpdate("launches", .increment(1))]))
        #expect(merged.decisions.map(\.result) == ["light", 2])
    }

    @Test func aChainStepKeepsIncrementsAndSetsWhatTheRuleDecides() throws {
        // The client incremented the score twice and renamed twice; someone else added 5 and
        // renamed meanwhile. The second change of the chain is rebased as a step from what the
        // first made of the object.
        let earlier: [ObjectChange] = [.update([FieldUpdate("score", .increment(1)), FieldUpdate("name", .set("l1"))])]
        let remote: [ObjectChange] = [.update([FieldUpdate("score", .increment(5)), FieldUpdate("name", .set("r"))])]
        let step = try ObjectMerge.rebaseStep(
            local: .update([FieldUpdate("score", .increment(1)), FieldUpdate("name", .set("l2")), FieldUpdate("extra", .set(1))]),
            after: earlier, over: remote, base: ["score": 10, "name": "a"],
            current: ["score": 16, "name": "r"], className: "Game", rules: rules)
        // sum: the increment stays an increment (10 + 5 + 1 + 1); name (rule remote): the remote
        // value stands, nothing to write; extra: nobody else touched it.
        #expect(step.change == .update([FieldUpdate("score", .increment(1)), FieldUpdate("extra", .set(1))]))
        #expect(step.decisions.map(\.field) == ["score", "name"])
        #expect(step.decisions.first { $0.field == "name" }?.result == "r")
        #expect(step.decisions.first { $0.field == "score" }?.result == 17)
        expectOperationError(.invalidOperation) {
            try ObjectMerge.rebaseStep(
                local: .update([]), after: earlier, over: [.delete, .update([])], base: [:], current: [:],
                className: "Game", rules: rules)
        }
    }

    @Test func aChainStepOnAListStoredInCommitOrderStaysAListEdit() throws {
        // A chain answered again: the client's first append (r2) was committed before someone
        // else's (r3), after another's (r0). The merge puts r3 before r2; the stored list has them
        // in commit order. The next append must stay an append, not write the list whole.
        let step = try ObjectMerge.rebaseStep(
            local: .update([FieldUpdate("l", .listAppend(["r2b"]))]),
            after: [.update([FieldUpdate("l", .listAppend(["r2"]))])],
            over: [.update([FieldUpdate("l", .listAppend(["r0"]))]), .update([FieldUpdate("l", .listAppend(["r3"]))])],
            base: ["l": ["s"]], current: ["l": ["s", "r0", "r2", "r3"]], className: "Game", rules: rules)
        #expect(step.change == .update([FieldUpdate("l", .listAppend(["r2b"]))]))
        // An insert lands before the element it preceded locally, wherever that element is stored.
        let insert = try ObjectMerge.rebaseStep(
            local: .update([FieldUpdate("l", .listInsert(index: 1, value: "x"))]),
            after: [.update([FieldUpdate("l", .listAppend(["r2"]))])],
            over: [.update([FieldUpdate("l", .listAppend(["r3"]))])],
            base: ["l": ["s"]], current: ["l": ["s", "r2", "r3"]], className: "Game", rules: rules)
        let applied = try FieldOperation.apply(insert.change?.updates.map(\.operation) ?? [], to: ["s", "r2", "r3"])
        #expect(insert.change?.updates.allSatisfy { if case .set = $0.operation { false } else { true } } == true)
        #expect(applied == ["s", "x", "r2", "r3"])
    }

    @Test func listEditsMoveOntoAReorderedListByElement() {
        #expect(
            ListTransform.transplant([.listInsert(index: 1, value: "x")], from: ["a", "b"], to: ["b", "a"])
                == [.listInsert(index: 0, value: "x")])
        #expect(ListTransform.transplant([.listRemove(index: 0)], from: ["a", "b", "a"], to: ["b", "a", "a"]) == [.listRemove(index: 1)])
        #expect(ListTransform.transplant([.listReplace(index: 1, value: "z")], from: ["a", "b"], to: ["b", "a"]) == [.listReplace(index: 0, value: "z")])
        #expect(ListTransform.transplant([.listAppend(["c"])], from: ["a"], to: ["a"]) == [.listAppend(["c"])])
        #expect(ListTransform.transplant([.listInsert(index: 0, value: "x")], from: ["a"], to: ["b"]) == nil, "not a reordering")
        #expect(ListTransform.transplant([.listMove(from: 0, to: 1)], from: ["a", "b"], to: ["b", "a"]) == nil)
    }
}
