@testable import Rooftop
import RooftopShared
import Testing

@Suite("Outbox schedule")
struct OutboxScheduleTests {
    private func row(
        _ seq: Int64, _ object: String, state: OutboxState = .pending, attempts: Int = 0, next: Int64? = nil,
        change: ObjectChange = .update([FieldUpdate("n", .increment(1))])
    ) -> OutboxRow {
        OutboxRow(
            seq: seq, mutation: Mutation(datastore: .app, className: "C", objectId: object, change: change), state: state,
            attempts: attempts, lastError: nil, nextAttemptAt: next)
    }

    @Test("due rows go in queue order; an object's later rows follow its first, and wait with it")
    func order() {
        let rows = [row(1, "a"), row(2, "b", next: 500), row(3, "a"), row(4, "b"), row(5, "c")]
        let batch = OutboxSchedule.plan(rows, now: 100, force: false, isolate: false)
        #expect(batch.rows.map(\.seq) == [1, 3, 5])
        #expect(batch.nextAttemptAt == 500 && !batch.hasMore)
        let later = OutboxSchedule.plan(rows, now: 500, force: false, isolate: false)
        #expect(later.rows.map(\.seq) == [1, 2, 3, 4, 5])
    }

    @Test("sent rows (left by a crash) are always due; force makes every pending row due")
    func sentAndForce() {
        let rows = [row(1, "a", state: .sent, next: 900), row(2, "b", next: 900)]
        #expect(OutboxSchedule.plan(rows, now: 0, force: false, isolate: false).rows.map(\.seq) == [1])
        #expect(OutboxSchedule.plan(rows, now: 0, force: true, isolate: false).rows.map(\.seq) == [1, 2])
    }

    @Test("a push stays within the server's limits; the rest goes next, and a lone oversized row still goes")
    func limits() {
        var limits = Limits()
        limits.maxMutationsPerPush = 2
        let rows = (1...5).map { row(Int64($0), "o\($0)") }
        let batch = OutboxSchedule.plan(rows, now: 0, force: false, isolate: false, limits: limits)
        #expect(batch.rows.count == 2 && batch.hasMore)
        limits.maxPushBytes = 150
        let big = row(1, "a", change: .update([FieldUpdate("s", .set(.string(String(repeating: "x", count: 500))))]))
        #expect(OutboxSchedule.plan([big, row(2, "b")], now: 0, force: false, isolate: false, limits: limits).rows.map(\.seq) == [1])
    }

    @Test("a push reads whole only the rows it may take, however long the queue: the heads decide what is due")
    func readsOnlyWhatItSends() {
        var limits = Limits()
        limits.maxMutationsPerPush = 10
        // 5,000 queued rows, the first 100 waiting for a retry time.
        let rows = (1...5_000).map { row(Int64($0), "o\($0)", next: $0 <= 100 ? 900 : nil) }
        var read: [Int64] = []
        let batch = OutboxSchedule.plan(heads: rows.map(\.head), now: 0, force: false, isolate: false, limits: limits) {
            read.append(rows[$0].seq)
            return rows[$0]
        }
        #expect(batch.rows.map(\.seq) == Array(101...110))
        #expect(read == Array(101...110), "only the rows sent are read")
        #expect(batch.hasMore && batch.nextAttemptAt == 900)
        #expect(batch == OutboxSchedule.plan(rows, now: 0, force: false, isolate: false, limits: limits))
    }

    @Test("isolation sends one row at a time")
    func isolation() {
        let rows = [row(1, "a"), row(2, "a"), row(3, "b")]
        let batch = OutboxSchedule.plan(rows, now: 0, force: false, isolate: true)
        #expect(batch.rows.map(\.seq) == [1] && batch.hasMore)
    }

    @Test("only rows never handed to the network may be rewritten")
    func reachedServer() {
        #expect(!row(1, "a").mayHaveReachedServer)
        #expect(row(1, "a", state: .sent).mayHaveReachedServer)
        #expect(row(1, "a", attempts: 1).mayHaveReachedServer)
    }
}
