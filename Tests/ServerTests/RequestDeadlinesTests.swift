import Foundation
import Hummingbird
import HummingbirdTesting
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

    /// Waits, without suspending, until the current task is cancelled or `limit` passes: a handler
    /// that works on the thread it started on and checks for cancellation between steps.
    private static func spinUntilCancelled(limit: Duration = .seconds(20)) -> Bool {
        let end = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < end {
            if Task.isCancelled { return true }
        }
        return false
    }

    @Test("the task of a handler is cancelled by its deadline before it starts, while it runs on the thread of the request, once attached, and never after it ended")
    func runningHandler() async throws {
        // Asked for before the task starts: applied as it enters.
        let early = RunningHandler()
        early.cancel()
        #expect(early.stateName == "cancelRequested")
        let cancelledAtStart = Task.immediate { () async throws -> Response in
            early.entered()
            defer { early.left() }
            #expect(Task.isCancelled)
            return Response(status: .ok)
        }
        early.attach(cancelledAtStart)
        _ = try await cancelledAtStart.value

        // Asked for from another thread (not one of the tasks' pool, which this task holds one
        // of) while the task runs on this one, before its handle exists.
        let running = RunningHandler()
        let started = PermissionCacheTests.Shared(false)
        DispatchQueue.global().async {
            let end = ContinuousClock.now.advanced(by: .seconds(20))
            while !started.value, ContinuousClock.now < end { usleep(1_000) }
            running.cancel()
        }
        let spinning = Task.immediate { () async throws -> Response in
            running.entered()
            defer { running.left() }
            #expect(running.stateName == "running")
            started.set(true)
            #expect(Self.spinUntilCancelled(), "the deadline's cancellation reached the handler's task")
            return Response(status: .ok)
        }
        running.attach(spinning)
        _ = try await spinning.value

        // Once attached, through the task's handle: a handler that waits is stopped.
        let attached = RunningHandler()
        let waiting = Task.immediate { () async throws -> Response in
            attached.entered()
            defer { attached.left() }
            try await Task.sleep(for: .seconds(60))
            return Response(status: .ok)
        }
        attached.attach(waiting)
        #expect(attached.stateName == "attached")
        attached.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }

        // After the handler ended: nothing is left to cancel, and nothing is cancelled.
        let ended = RunningHandler()
        let done = Task.immediate { () async throws -> Response in
            ended.entered()
            defer { ended.left() }
            return Response(status: .ok)
        }
        #expect(ended.stateName == "finished")
        ended.cancel()
        #expect(ended.stateName == "finished")
        ended.attach(done)
        #expect(!done.isCancelled)
        #expect(try await done.value.status == .ok)
    }

    @Test("through the router: a handler that never waits is stopped at its deadline and answered 503 timeout; a quick one is answered")
    func middleware() async throws {
        let router = Router()
        router.middlewares.add(ErrorMiddleware())
        router.middlewares.add(RequestDeadlineMiddleware(timeout: .milliseconds(300)))
        router.get("spin") { _, _ -> HTTPResponse.Status in
            // Bounded: a deadline that never comes fails the test, not the run.
            guard Self.spinUntilCancelled() else { return .ok }
            throw CancellationError()
        }
        router.get("quick") { _, _ -> HTTPResponse.Status in .noContent }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/spin", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(String(buffer: response.body).contains("\"timeout\""))
            }
            try await client.execute(uri: "/quick", method: .get) { response in
                #expect(response.status == .noContent)
            }
        }
    }
}
