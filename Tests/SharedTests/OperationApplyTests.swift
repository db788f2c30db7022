import RooftopShared
import Testing

@Suite("Applying field operations")
struct OperationApplyTests {
    @Test func setAndUnset() throws {
        #expect(try FieldOperation.set("x").apply(to: nil) == "x")
        #expect(try FieldOperation.set(.null).apply(to: 3) == .null)
        #expect(try FieldOperation.unset.apply(to: "x") == nil)
        #expect(try FieldOperation.unset.apply(to: nil) == nil)
    }

    @Test func incrementKeepsIntsAndWidensToDouble() throws {
        #expect(try FieldOperation.increment(1).apply(to: .int(41)) == .int(42))
        #expect(try FieldOperation.increment(-5).apply(to: nil) == .int(-5))
        #expect(try FieldOperation.increment(0.5).apply(to: .int(1)) == .double(1.5))
        #expect(try FieldOperation.increment(2).apply(to: .double(0.25)) == .double(2.25))
        #expect(try FieldOperation.increment(0.5).apply(to: nil) == .double(0.5))
    }

    @Test func incrementOverflowIsAnErrorNotAWrap() {
        expectOperationError(.illegalArgument) { try FieldOperation.increment(1).apply(to: .int(.max)) }
        expectOperationError(.illegalArgument) { try FieldOperation.increment(.int(.min)).apply(to: .int(-1)) }
        expectOperationError(.illegalArgument) { try FieldOperation.increment("1").apply(to: .int(1)) }
    }

    @Test(arguments: [Value.string("1"), .null, .bool(true), ["a"], .date(Timestamp(millisecondsSinceEpoch: 0))])
    func incrementOfANonNumberIsABadType(field: Value) {
        expectOperationError(.badType) { try FieldOperation.increment(1).apply(to: field) }
    }

    @Test func listOperations() throws {
        let list: Value = ["a", "b", "c"]
        #expect(try FieldOperation.listAppend(["d", "e"]).apply(to: list) == ["a", "b", "c", "d", "e"])
        #expect(try FieldOperation.listAppend(["d"]).apply(to: nil) == ["d"])
        #expect(try FieldOperation.listInsert(index: 0, value: "z").apply(to: list) == ["z", "a", "b", "c"])
        #expect(try FieldOperation.listInsert(index: 3, value: "z").apply(to: list) == ["a", "b", "c", "z"])
        #expect(try FieldOperation.listInsert(index: 0, value: "z").apply(to: nil) == ["z"])
        #expect(try FieldOperation.listRemove(index: 1).apply(to: list) == ["a", "c"])
        #expect(try FieldOperation.listMove(from: 0, to: 2).apply(to: list) == ["b", "c", "a"])
        #expect(try FieldOperation.listMove(from: 2, to: 0).apply(to: list) == ["c", "a", "b"])
        #expect(try FieldOperation.listReplace(index: 2, value: 9).apply(to: list) == ["a", "b", 9])
    }

    @Test(arguments: [
        FieldOperation.listInsert(index: 4, value: "x"), .listInsert(index: -1, value: "x"), .listRemove(index: 3),
        .listRemove(index: -1), .listMove(from: 3, to: 0), .listMove(from: 0, to: 3), .listReplace(index: 3, value: 1),
    ])
    func outOfRangeIndicesAreBadIndex(operation: FieldOperation) {
        expectOperationError(.badIndex) { try operation.apply(to: ["a", "b", "c"]) }
    }

    @Test func anAbsentListIsEmpty() {
        expectOperationError(.badIndex) { try FieldOperation.listRemove(index: 0).apply(to: nil) }
        expectOperationError(.badIndex) { try FieldOperation.listInsert(index: 1, value: 1).apply(to: nil) }
    }

    @Test(arguments: [Value.int(1), "abc", .null])
    func listOperationsOnANonListAreBadType(field: Value) {
        expectOperationError(.badType) { try FieldOperation.listAppend([1]).apply(to: field) }
        expectOperationError(.badType) { try FieldOperation.listInsert(index: 0, value: 1).apply(to: field) }
    }

    @Test func relationOperations() throws {
        let users = Value.relation(Relation(className: "_User", objectIds: ["a", "b"]))
        #expect(
            try FieldOperation.relationAdd(className: "_User", objectIds: ["c", "a"]).apply(to: users)
                == .relation(Relation(className: "_User", objectIds: ["a", "b", "c"])))
        #expect(
            try FieldOperation.relationRemove(className: "_User", objectIds: ["a", "z"]).apply(to: users)
                == .relation(Relation(className: "_User", objectIds: ["b"])))
        #expect(
            try FieldOperation.relationAdd(className: "Team", objectIds: ["t"]).apply(to: nil)
                == .relation(Relation(className: "Team", objectIds: ["t"])))
        #expect(
            try FieldOperation.relationRemove(className: "Team", objectIds: ["t"]).apply(to: nil)
                == .relation(Relation(className: "Team", objectIds: [])))
    }

    @Test func relationErrors() {
        let users = Value.relation(Relation(className: "_User", objectIds: ["a"]))
        expectOperationError(.badType) {
            try FieldOperation.relationAdd(className: "Team", objectIds: ["t"]).apply(to: users)
        }
        expectOperationError(.badType) {
            try FieldOperation.relationRemove(className: "Team", objectIds: []).apply(to: users)
        }
        expectOperationError(.badType) {
            try FieldOperation.relationAdd(className: "Team", objectIds: ["t"]).apply(to: ["t"])
        }
        expectOperationError(.illegalArgument) {
            try FieldOperation.relationAdd(className: "_User", objectIds: ["bad id"]).apply(to: users)
        }
        expectOperationError(.illegalArgument) {
            try FieldOperation.relationAdd(className: "", objectIds: []).apply(to: nil)
        }
    }
}
