import Foundation
import RooftopShared
import Testing

@testable import RooftopServer

/// How `object_operations` keeps an operation: a first creation in a short form, everything else
/// as ``OperationRecord`` encodes it, both read back as the record written.
@Suite("Stored operations")
struct StoredOperationTests {
    private let creation = OperationRecord(
        version: 1, change: .update([]), priorValues: ["n": nil, "name": nil, "tags": nil],
        origin: "3edaff4c10d2dafa.5e517ff68ceeb78afd04d06454c5a7ca")

    @Test("a first creation is stored as the fields it created and its origin, and reads back whole")
    func firstCreation() throws {
        let text = try StoredOperation.text(creation, firstCreation: true)
        #expect(
            text == #"{"version":1,"created":["n","name","tags"],"origin":"3edaff4c10d2dafa.5e517ff68ceeb78afd04d06454c5a7ca"}"#)
        #expect(text.utf8.count < (try creation.encodedDocument()).utf8.count - 30)
        #expect(try StoredOperation.record(from: text) == creation)
        var anonymous = creation
        anonymous.origin = nil
        let plain = try StoredOperation.text(anonymous, firstCreation: true)
        #expect(!plain.contains("origin"))
        #expect(try StoredOperation.record(from: plain) == anonymous)
        let empty = OperationRecord(version: 1, change: .update([]), priorValues: [:])
        #expect(try StoredOperation.record(from: try StoredOperation.text(empty, firstCreation: true)) == empty)
    }

    @Test("every other operation keeps the record's own form: what does not fit the short one is never cut")
    func otherOperations() throws {
        let others = [
            // Not a first creation (a re-creation over a tombstone, say).
            (creation, false),
            // A first creation whose record still carries its updates or ACL, or a prior value.
            (OperationRecord(version: 1, change: .update([FieldUpdate("n", .set(1))]), priorValues: ["n": nil]), true),
            (OperationRecord(version: 1, change: .update([], acl: ACL()), priorValues: ["n": nil]), true),
            (OperationRecord(version: 1, change: .update([]), priorValues: ["n": .some(.int(2))]), true),
            (OperationRecord(version: 1, change: .update([]), priorValues: ["n": .some(.null)]), true),
            (OperationRecord(version: 4, change: .delete, priorValues: ["n": .some(3)], origin: "a.b"), true),
        ]
        for (record, first) in others {
            let text = try StoredOperation.text(record, firstCreation: first)
            #expect(text == (try record.encodedDocument()))
            #expect(try StoredOperation.record(from: text) == record)
        }
    }

    @Test("rows written before the short form, and damaged rows, read as before: no trap")
    func earlierAndDamagedRows() throws {
        // A first creation as servers stored it until now.
        #expect(try StoredOperation.record(from: try creation.encodedDocument()) == creation)
        // A field named twice: read once.
        let twice = try StoredOperation.record(from: #"{"version":1,"created":["n","n"]}"#)
        #expect(twice.priorValues.count == 1)
        for damaged in [#"{"created":["n"]}"#, #"{"version":1,"created":"n"}"#, #"{"version":1}"#, "", "[]"] {
            #expect(throws: (any Error).self, "\(damaged)") { try StoredOperation.record(from: damaged) }
        }
    }
}
