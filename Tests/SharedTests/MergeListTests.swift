import RooftopShared
import Testing

@Suite("Merging list operations")
struct MergeListTests {
    /// The merged list: the rebased local operations applied to the remote result.
    private func merge(
        base: Value?, remote: [FieldOperation], local: [FieldOperation], rule: MergeRule = .remote
    ) throws -> (value: Value?, operations: [FieldOperation]) {
        let merged = try FieldMerge.rebase(field: "list", base: base, local: local, over: remote, rule: rule)
        let remoteValue = try FieldOperation.apply(remote, to: base)
        let value = try FieldOperation.apply(merged.operations, to: remoteValue)
        #expect(merged.decision?.result == value)
        #expect(merged.decision?.resolution == .listTransform)
        return (value, merged.operations)
    }

    @Test func insertsAtTheSameIndexPutTheRemoteElementFirst() throws {
        #expect(
            try merge(
                base: ["a", "b"], remote: [.listInsert(index: 1, value: "r")],
                local: [.listInsert(index: 1, value: "l")]
            ).value == ["a", "r", "l", "b"])
        #expect(
            try merge(
                base: ["a"], remote: [.listInsert(index: 0, value: "r")], local: [.listInsert(index: 0, value: "l")]
            ).value == ["r", "l", "a"])
        #expect(
            try merge(
                base: ["a"], remote: [.listInsert(index: 1, value: "r")], local: [.listInsert(index: 1, value: "l")]
            ).value == ["a", "r", "l"])
    }

    @Test func localInsertsKeepTheirOrder() throws {
        let merged = try merge(
            base: ["a", "b"], remote: [.listInsert(index: 1, value: "r")],
            local: [
                .listInsert(index: 1, value: "l1"), .listInsert(index: 2, value: "l2"),
                .listInsert(index: 1, value: "l0"),
            ])
        #expect(merged.value == ["a", "r", "l0", "l1", "l2", "b"])
    }

    @Test func anElementRemovedOnBothSidesIsRemovedOnce() throws {
        let merged = try merge(base: ["a", "b", "c"], remote: [.listRemove(index: 1)], local: [.listRemove(index: 1)])
        #expect(merged.value == ["a", "c"])
        #expect(merged.operations.isEmpty)
    }

    @Test func removesFollowTheirElementAcrossRemoteShifts() throws {
        let merged = try merge(
            base: ["a", "b", "c"], remote: [.listInsert(index: 0, value: "r"), .listRemove(index: 1)],
            local: [.listRemove(index: 2)])
        #expect(merged.value == ["r", "b"])
        #expect(merged.operations == [.listRemove(index: 2)])
    }

    @Test func replaceOrMoveOfAnElementRemovedRemotelyIsDropped() throws {
        let replaced = try merge(
            base: ["a", "b"], remote: [.listRemove(index: 0)], local: [.listReplace(index: 0, value: "x")])
        #expect(replaced.value == ["b"])
        #expect(replaced.operations.isEmpty)
        let moved = try merge(base: ["a", "b"], remote: [.listRemove(index: 0)], local: [.listMove(from: 0, to: 1)])
        #expect(moved.value == ["b"])
        #expect(moved.operations.isEmpty)
    }

    @Test func appendsStayAppends() throws {
        let merged = try merge(
            base: ["a"], remote: [.listAppend(["r1", "r2"]), .listRemove(index: 0)], local: [.listAppend(["l"])])
        #expect(merged.value == ["r1", "r2", "l"])
        #expect(merged.operations == [.listAppend(["l"])])
        #expect(try merge(base: nil, remote: [.listAppend(["r"])], local: [.listAppend(["l"])]).value == ["r", "l"])
    }

    @Test func anInsertBeforeARemotelyRemovedElementLandsBeforeItsNextSurvivor() throws {
        let merged = try merge(
            base: ["a", "b", "c"], remote: [.listRemove(index: 1)], local: [.listInsert(index: 1, value: "l")])
        #expect(merged.value == ["a", "l", "c"])
    }

    @Test func movesFollowTheirElement() throws {
        // Remote appended and removed; the local move of "c" to the front still moves "c".
        let merged = try merge(
            base: ["a", "b", "c"], remote: [.listAppend(["r"]), .listRemove(index: 0)],
            local: [.listMove(from: 2, to: 0)])
        #expect(merged.value == ["c", "b", "r"])
        // A local move of an element remote also moved wins.
        let both = try merge(
            base: ["a", "b", "c"], remote: [.listMove(from: 0, to: 2)], local: [.listMove(from: 0, to: 1)])
        #expect(both.value == ["b", "a", "c"])
    }

    @Test func aReplaceOfAnElementOnlyLocalChangedKeepsTheLocalValue() throws {
        let merged = try merge(
            base: ["a", "b"], remote: [.listReplace(index: 0, value: "A")], local: [.listReplace(index: 1, value: "B")])
        #expect(merged.value == ["A", "B"])
    }

    @Test(arguments: [
        (MergeRule.remote, Value.int(20)), (.local, 15), (.max, 20), (.min, 15), (.sum, 25),
    ])
    func anElementReplacedOnBothSidesTakesTheRulesValue(rule: MergeRule, expected: Value) throws {
        let merged = try merge(
            base: ["x", 10], remote: [.listReplace(index: 1, value: 20), .listInsert(index: 0, value: "r")],
            local: [.listReplace(index: 1, value: 12), .listReplace(index: 1, value: 15)], rule: rule)
        #expect(merged.value == ["r", "x", expected])
    }

    @Test func aWholeListSetOnOneSideIsAConflictForTheRule() throws {
        let remoteWins = try FieldMerge.rebase(
            field: "list", base: ["a"], local: [.listAppend(["l"])], over: [.set(["new"])], rule: .remote)
        #expect(remoteWins.operations.isEmpty)
        #expect(remoteWins.decision?.resolution == .rule)
        let localWins = try FieldMerge.rebase(
            field: "list", base: ["a"], local: [.listAppend(["l"])], over: [.set(["new"])], rule: .local)
        #expect(localWins.operations == [.set(["a", "l"])])
    }

    @Test func invalidIndicesOnEitherSideAreRejected() {
        expectOperationError(.badIndex) {
            try FieldMerge.rebase(
                field: "l", base: ["a"], local: [.listRemove(index: 0)], over: [.listRemove(index: 3)], rule: .remote)
        }
        expectOperationError(.badIndex) {
            try FieldMerge.rebase(
                field: "l", base: ["a"], local: [.listMove(from: 0, to: 1)], over: [.listAppend([1])], rule: .remote)
        }
    }
}
