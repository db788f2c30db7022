import RooftopShared
import Testing

/// Whether a list of operations is an object's whole history between two versions: the one rule
/// the server's write path and its operations endpoint both apply.
@Suite("Operation histories: complete or not")
struct OperationHistoryTests {
    private func records(_ versions: [Int64]) -> [OperationRecord] {
        versions.map { OperationRecord(version: $0, change: .update([]), priorValues: [:]) }
    }

    @Test func completeHistories() {
        #expect(OperationRecord.complete(records([4, 5]), after: 3, through: 5))
        // A change committed after the object was read only adds at the end.
        #expect(OperationRecord.complete(records([4, 5, 6]), after: 3, through: 5))
        #expect(OperationRecord.complete([], after: 5, through: 5))
        #expect(OperationRecord.complete([], after: 9, through: 5))
        #expect(OperationRecord.complete([], after: .max, through: 5))
        #expect(OperationRecord.complete([], after: .max, through: .max))
    }

    @Test func incompleteHistories() {
        #expect(!OperationRecord.complete(records([5]), after: 3, through: 5), "the start was swept")
        #expect(!OperationRecord.complete(records([4, 6]), after: 3, through: 6), "a gap")
        #expect(!OperationRecord.complete(records([4]), after: 3, through: 5), "the end is missing")
        #expect(!OperationRecord.complete([], after: 3, through: 5))
        #expect(!OperationRecord.complete([], after: .min, through: 0))
    }
}
