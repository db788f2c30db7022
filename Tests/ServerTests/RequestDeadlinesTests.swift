@testable import RooftopServer
import RooftopShared
import RooftopTestSupport
import Synchronization
import Testing

/// The deadlines of requests under way (``RequestDeadlines``): one sweeping task cancels the
/// requests past theirs, leaves the others, and stops once none runs.
@Suite("Request deadlines", .timeLimit(.minutes(1)))
struct RequestDeadlinesTests {
    @Test("a request past its deadline is cancelled once and reported expired; one within it is not; the sweeper stops when none runs")
    func sweep() async throws {
        let deadlines = RequestDeadlines(interval: .milliseconds(10))
        let cancelled = Mutex<[String]>([])
        #expect(!deadlines.isSweeping)
        let late = deadlines.start(after: .milliseconds(30)) { cancelled.withLock { $0.append("late") } }
        let patient = deadlines.start(after: .seconds(60)) { cancelled.withLock { $0.append("patient") } }
        #expect(deadlines.isSweeping)
        try await TestWait.until("the late request is cancelled") { cancelled.withLock { !$0.isEmpty } }
        // Several sweeps later, still cancelled once, and the patient one not at all.
        let more = deadlines.start(after: .milliseconds(1)) { cancelled.withLock { $0.append("more") } }
        try await TestWait.until("the next late request is cancelled") { cancelled.withLock { $0.count == 2 } }
        #expect(cancelled.withLock { $0 } == ["late", "more"])
        #expect(deadlines.finish(late))
        #expect(deadlines.finish(more))
        #expect(!deadlines.finish(patient))
        #expect(deadlines.runningCount == 0)
        try await TestWait.until("the sweeper stops") { !deadlines.isSweeping }
        // And starts again with the next request.
        let again = deadlines.start(after: .seconds(60)) {}
        #expect(deadlines.isSweeping)
        #expect(!deadlines.finish(again))
    }

    @Test("a request that finishes in time is never cancelled, however many run")
    func inTime() async throws {
        let deadlines = RequestDeadlines(interval: .milliseconds(5))
        let cancelled = Atomic<Int>(0)
        for _ in 0..<1000 {
            let ticket = deadlines.start(after: .seconds(30)) { cancelled.add(1, ordering: .relaxed) }
            #expect(!deadlines.finish(ticket))
        }
        #expect(cancelled.load(ordering: .relaxed) == 0)
        #expect(deadlines.runningCount == 0)
        try await TestWait.until("the sweeper stops") { !deadlines.isSweeping }
    }
}
