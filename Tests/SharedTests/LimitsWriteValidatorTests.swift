import RooftopShared
import Testing

@Suite("Write validation")
struct LimitsWriteValidatorTests {
    let validator = WriteValidator()

    func nestedList(depth: Int) -> Value {
        var value: Value = 1
        for _ in 0..<depth { value = .list([value]) }
        return value
    }

    func code(_ body: () throws(RooftopError) -> Void) -> RooftopError.Code? {
        do {
            try body()
            return nil
        } catch {
            return error.code
        }
    }

    @Test func acceptsAnOrdinaryMutation() throws {
        let mutation = Mutation(
            datastore: .app, className: "GameScore", objectId: ObjectID.generate(), baseVersion: 2,
            change: .update([
                FieldUpdate("score", .increment(1)),
                FieldUpdate("owner", .set(.pointer(Pointer(className: "_User", objectId: "u1")))),
                FieldUpdate("fans", .relationAdd(className: "_User", objectIds: ["u2", "u3"])),
                FieldUpdate("tags", .listInsert(index: 0, value: "new")),
            ]))
        try validator.validate(mutation)
        try validator.validate(Mutation(datastore: .app, className: "GameScore", objectId: "x", change: .delete))
    }

    @Test func namesAndIDs() {
        let bad = [
            Mutation(datastore: .app, className: "Game Score", objectId: "x", change: .delete),
            Mutation(datastore: .app, className: ":System", objectId: "x", change: .delete),
            Mutation(datastore: .app, className: "GameScore", objectId: "", change: .delete),
            Mutation(datastore: .app, className: "GameScore", objectId: "x", baseVersion: -1, change: .delete),
            Mutation(
                datastore: .app, className: "GameScore", objectId: "x",
                change: .update([FieldUpdate(":secret", .unset)])),
            Mutation(
                datastore: .app, className: "GameScore", objectId: "x", change: .update([FieldUpdate("a b", .unset)])),
        ]
        for mutation in bad {
            #expect(code { () throws(RooftopError) in try validator.validate(mutation) } == .illegalArgument)
        }
        for field in ["objectId", "createdAt", "updatedAt", "ACL"] {
            #expect(
                code { () throws(RooftopError) in try validator.validate(FieldUpdate(field, .set(1))) }
                    == .invalidOperation)
        }
    }

    @Test func nestingDepthAtTheBoundary() {
        #expect(WriteValidator.depth(of: nestedList(depth: 3)) == 3)
        #expect(code { () throws(RooftopError) in try validator.validate(nestedList(depth: 32), field: "f") } == nil)
        #expect(
            code { () throws(RooftopError) in try validator.validate(nestedList(depth: 33), field: "f") } == .sizeLimit)
        // A value appended to a list gains the list's level.
        #expect(
            code { () throws(RooftopError) in
                try validator.validate(FieldUpdate("f", .listAppend([nestedList(depth: 31)])))
            } == nil)
        #expect(
            code { () throws(RooftopError) in
                try validator.validate(FieldUpdate("f", .listAppend([nestedList(depth: 32)])))
            } == .sizeLimit)
        var json: JSONValue = .int(1)
        for _ in 0..<33 { json = .array([json]) }
        #expect(code { () throws(RooftopError) in try validator.validate(.json(json), field: "f") } == .sizeLimit)
        var strict = Limits()
        strict.maxNestingDepth = 2
        #expect(
            code { () throws(RooftopError) in
                try WriteValidator(limits: strict).validate(nestedList(depth: 3), field: "f")
            } == .sizeLimit)
    }

    @Test func referencesAndArguments() {
        let badPointer = Value.pointer(Pointer(className: "User", objectId: "not valid!"))
        #expect(code { () throws(RooftopError) in try validator.validate(badPointer, field: "p") } == .illegalArgument)
        #expect(
            code { () throws(RooftopError) in try validator.validate(.list([badPointer]), field: "p") }
                == .illegalArgument)
        let badRelation = Value.relation(Relation(className: "", objectIds: ["a"]))
        #expect(code { () throws(RooftopError) in try validator.validate(badRelation, field: "r") } == .illegalArgument)
        #expect(
            code { () throws(RooftopError) in
                try validator.validate(FieldUpdate("r", .relationRemove(className: "User", objectIds: [":x"])))
            } == .illegalArgument)
        #expect(
            code { () throws(RooftopError) in try validator.validate(FieldUpdate("n", .increment("1"))) } == .badType)
        #expect(code { () throws(RooftopError) in try validator.validate(FieldUpdate("n", .increment(1.5))) } == nil)
        #expect(
            code { () throws(RooftopError) in try validator.validate(FieldUpdate("l", .listRemove(index: -1))) }
                == .badIndex)
        #expect(
            code { () throws(RooftopError) in try validator.validate(FieldUpdate("l", .listMove(from: 0, to: -2))) }
                == .badIndex)
    }
}
