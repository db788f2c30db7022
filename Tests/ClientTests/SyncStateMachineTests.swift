import PropertyBased
@testable import Rooftop
import RooftopShared
import Testing

@Suite("Sync state machine")
struct SyncStateMachineTests {
    private func page(_ count: Int, _ checkpoint: String, more: Bool, remaining: Int? = nil) -> SyncStateMachine.Page {
        SyncStateMachine.Page(count: count, checkpoint: Checkpoint(checkpoint), hasMore: more, remaining: remaining)
    }

    @Test("pages are requested, applied with their checkpoint, and counted; the total is known from the first page")
    func paging() {
        var machine = SyncStateMachine()
        #expect(machine.handle(.start(checkpoint: nil)) == [.requestPage(since: nil)])
        #expect(machine.handle(.received(page(2, "c:2", more: true, remaining: 3))) == [
            .reportProgress(processed: 0, total: 5), .applyPage(checkpoint: Checkpoint("c:2")),
        ])
        #expect(machine.handle(.applied) == [
            .reportProgress(processed: 2, total: 5), .requestPage(since: Checkpoint("c:2")),
        ])
        #expect(machine.handle(.received(page(3, "c:5", more: false, remaining: 0))) == [.applyPage(checkpoint: Checkpoint("c:5"))])
        #expect(machine.handle(.applied) == [.reportProgress(processed: 5, total: 5), .finish(processed: 5)])
        #expect(machine.phase == .finished && machine.checkpoint == Checkpoint("c:5"))
    }

    @Test("a pull resumes from the stored checkpoint")
    func resume() {
        var machine = SyncStateMachine()
        #expect(machine.handle(.start(checkpoint: Checkpoint("c:40"))) == [.requestPage(since: Checkpoint("c:40"))])
    }

    @Test("passing request failures are retried up to the limit, from the same checkpoint; then the pull fails")
    func retries() {
        var machine = SyncStateMachine(maxRetries: 2)
        _ = machine.handle(.start(checkpoint: Checkpoint("c:1")))
        let offline = RooftopError(.noConnection, "offline")
        #expect(machine.handle(.requestFailed(offline)) == [.retryLater(attempt: 1)])
        #expect(machine.handle(.retryTimerFired) == [.requestPage(since: Checkpoint("c:1"))])
        #expect(machine.handle(.requestFailed(offline)) == [.retryLater(attempt: 2)])
        #expect(machine.handle(.retryTimerFired) == [.requestPage(since: Checkpoint("c:1"))])
        #expect(machine.handle(.requestFailed(offline)) == [.fail(offline)])
        #expect(machine.phase == .failed)
    }

    @Test("a success resets the retry count")
    func retryCountResets() {
        var machine = SyncStateMachine(maxRetries: 1)
        _ = machine.handle(.start(checkpoint: nil))
        let busy = RooftopError(.retryLater, "busy")
        #expect(machine.handle(.requestFailed(busy)) == [.retryLater(attempt: 1)])
        _ = machine.handle(.retryTimerFired)
        _ = machine.handle(.received(page(1, "c:1", more: true, remaining: 1)))
        _ = machine.handle(.applied)
        #expect(machine.handle(.requestFailed(busy)) == [.retryLater(attempt: 1)])
    }

    @Test("a refusal is not retried; notFound purges the datastore, then fails")
    func refusals() {
        var machine = SyncStateMachine(maxRetries: 5)
        _ = machine.handle(.start(checkpoint: nil))
        let denied = RooftopError(.disallowed, "no")
        #expect(machine.handle(.requestFailed(denied)) == [.fail(denied)])
        var lost = SyncStateMachine(maxRetries: 5)
        _ = lost.handle(.start(checkpoint: nil))
        let gone = RooftopError(.notFound, "no datastore")
        #expect(lost.handle(.requestFailed(gone)) == [.purgeDatastore, .fail(gone)])
    }

    @Test("a checkpoint the server refuses restarts the pull from the beginning, once")
    func refusedCheckpoint() {
        for code in [RooftopError.Code.illegalArgument, .historyExpired] {
            var machine = SyncStateMachine()
            _ = machine.handle(.start(checkpoint: Checkpoint("c:old")))
            let invalid = RooftopError(code, "pull again without a checkpoint")
            #expect(machine.handle(.requestFailed(invalid)) == [.startOver, .requestPage(since: nil)])
            #expect(machine.handle(.requestFailed(invalid)) == [.fail(invalid)])
        }
        // Without a checkpoint there is nothing to start over from.
        var fresh = SyncStateMachine()
        _ = fresh.handle(.start(checkpoint: nil))
        let expired = RooftopError(.historyExpired, "no")
        #expect(fresh.handle(.requestFailed(expired)) == [.fail(expired)])
    }

    @Test("a page that fails to apply fails the pull, keeping the checkpoint of the last page applied")
    func applyFailure() {
        var machine = SyncStateMachine()
        _ = machine.handle(.start(checkpoint: nil))
        _ = machine.handle(.received(page(2, "c:2", more: true, remaining: 2)))
        _ = machine.handle(.applied)
        _ = machine.handle(.received(page(2, "c:4", more: false)))
        let broken = RooftopError(.cache, "disk full")
        #expect(machine.handle(.applyFailed(broken)) == [.fail(broken)])
        #expect(machine.checkpoint == Checkpoint("c:2") && machine.processed == 2)
    }

    @Test("without an estimate the total is unknown until the last page")
    func unknownTotal() {
        var machine = SyncStateMachine()
        _ = machine.handle(.start(checkpoint: nil))
        #expect(machine.handle(.received(page(3, "c:3", more: true))).first == .reportProgress(processed: 0, total: nil))
        #expect(machine.handle(.applied).first == .reportProgress(processed: 3, total: nil))
        _ = machine.handle(.received(page(1, "c:4", more: false)))
        #expect(machine.handle(.applied).first == .reportProgress(processed: 4, total: 4))
    }

    @Test("an empty page that does not advance fails instead of looping; events out of place are ignored")
    func guards() {
        var machine = SyncStateMachine()
        #expect(machine.handle(.applied).isEmpty)
        _ = machine.handle(.start(checkpoint: Checkpoint("c:9")))
        #expect(machine.handle(.applied).isEmpty)
        #expect(machine.handle(.retryTimerFired) == [.requestPage(since: Checkpoint("c:9"))])
        guard case .fail? = machine.handle(.received(page(0, "c:9", more: true))).first else {
            Issue.record("a non-advancing page must fail")
            return
        }
    }

    @Test("for any paging, processed adds up to the changes, the total ends equal, and checkpoints go in order")
    func countsAddUp() async {
        await propertyCheck(input: Gen.int(in: 0...50).array(of: 1...12)) { sizes in
            var machine = SyncStateMachine()
            var actions = machine.handle(.start(checkpoint: nil))
            var requested: [Checkpoint?] = []
            var reports: [(Int, Int?)] = []
            var pageIndex = 0
            var finished: Int?
            var delivered = 0
            while !actions.isEmpty {
                switch actions.removeFirst() {
                case .requestPage(let since):
                    requested.append(since)
                    let count = sizes[pageIndex]
                    delivered += count
                    let remaining = sizes.dropFirst(pageIndex + 1).reduce(0, +)
                    let more = pageIndex < sizes.count - 1
                    actions += machine.handle(.received(page(count, "c:\(pageIndex)", more: more, remaining: remaining)))
                    pageIndex += 1
                case .applyPage:
                    actions += machine.handle(.applied)
                case .reportProgress(let processed, let total):
                    reports.append((processed, total))
                case .finish(let processed):
                    finished = processed
                default:
                    Issue.record("unexpected action")
                }
            }
            let total = sizes.reduce(0, +)
            #expect(finished == total && delivered == total)
            #expect(reports.first?.1 == total, "the first report announces the whole total")
            #expect(reports.last.map { $0.0 == total && $0.1 == total } == true)
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.0 <= $1.0 }, "processed never goes back")
            #expect(requested == [nil] + (0..<(sizes.count - 1)).map { Checkpoint("c:\($0)") })
        }
    }
}
