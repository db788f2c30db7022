import RooftopShared
import Testing

@Suite("Applying field updates and object changes")
struct OperationFieldUpdateTests {
    @Test func fieldNamesAreValidated() throws {
        try FieldUpdate.validateField("score")
        try FieldUpdate.validateField("a.b-c_d+e/f=g")
        expectOperationError(.illegalArgument) { try FieldUpdate.validateField("a b") }
        expectOperationError(.illegalArgument) { try FieldUpdate.validateField("") }
        expectOperationError(.illegalArgument) { try FieldUpdate.validateField(":internal") }
        expectOperationError(.illegalArgument) { try FieldUpdate.validateField(String(repeating: "x", count: 65)) }
    }

    @Test(arguments: ["objectId", "createdAt", "updatedAt", "ACL"])
    func builtInFieldsAreInvalidOperations(field: String) {
        expectOperationError(.invalidOperation) { try FieldUpdate(field, .set("x")).apply(to: [:]) }
    }

    @Test func updatesApplyInOrder() throws {
        let fields = try FieldUpdate.apply(
            [
                FieldUpdate("score", .increment(10)), FieldUpdate("tags", .listAppend(["a"])),
                FieldUpdate("tags", .listInsert(index: 0, value: "z")), FieldUpdate("gone", .unset),
                FieldUpdate("score", .increment(0.5)),
            ],
            to: ["score": 5, "gone": true])
        #expect(fields == ["score": .double(15.5), "tags": ["z", "a"]])
        #expect(fields["gone"] == nil)
    }

    @Test func aFailingUpdateNamesItsFieldAndAppliesNothing() throws {
        let before: [String: Value] = ["score": 1, "tags": ["a"]]
        var fields = before
        let thrown = #expect(throws: RooftopError.self) {
            fields = try FieldUpdate.apply(
                [FieldUpdate("score", .increment(1)), FieldUpdate("tags", .listRemove(index: 5))], to: fields)
        }
        #expect(thrown?.code == .badIndex)
        #expect(thrown?.field == "tags")
        #expect(fields == before)
    }

    @Test func snapshotApplyingUpdatesFieldsAndACLOnly() throws {
        let snapshot = ObjectSnapshot(
            className: "Game", objectId: "g1", fields: ["score": 1], version: 7, fieldVersions: ["score": 7])
        let next = try #require(
            try snapshot.applying(.update([FieldUpdate("score", .increment(2))], acl: .publicReadWrite)))
        #expect(next.fields == ["score": 3])
        #expect(next.acl == .publicReadWrite)
        #expect(next.version == 7)
        #expect(next.objectId == "g1")
        let same = try #require(try snapshot.applying(.update([])))
        #expect(same == snapshot)
        #expect(try snapshot.applying(.delete) == nil)
    }

    @Test func aFailingChangeLeavesTheSnapshotAsItWas() {
        let snapshot = ObjectSnapshot(className: "Game", objectId: "g1", fields: ["score": 1, "name": "x"])
        var current = snapshot
        expectOperationError(.badType) {
            current =
                try current.applying(
                    .update(
                        [FieldUpdate("score", .set(100)), FieldUpdate("name", .increment(1))], acl: .publicReadWrite))
                ?? current
        }
        #expect(current == snapshot)
    }
}
