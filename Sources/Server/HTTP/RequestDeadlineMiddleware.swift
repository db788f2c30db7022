import Hummingbird
import RooftopShared
import Synchronization

/// Gives every HTTP request a deadline: when the handler has not answered within `timeout`, its
/// task is cancelled and the request is answered `503` with code `timeout`.
///
/// Cancellation is cooperative: SQLite statements stop at once (GRDB interrupts a cancelled
/// task's statement; point reads, microseconds each, run to their end), a PostgreSQL statement
/// runs to its end (postgres-nio does not cancel one in flight), and the loops that a request can
/// make long (includes, removal by query) check for it between steps. Work committed before the
/// deadline stays committed — each mutation and each removed object is its own transaction — so a
/// retry (a push with the same mutation IDs, the same removal) finishes the rest and never applies
/// anything twice. No request can hold the server past its deadline, nor keep a graceful shutdown
/// waiting longer.
///
/// The handler runs in a task of its own, which ``RequestDeadlines`` cancels once it is past its
/// deadline (checked every tenth of the timeout, at most 100 ms apart, and only while requests
/// run). A timer per request — a second child task sleeping out the timeout — cost a third of
/// `GET /health`'s time (0.63 against 0.42 ms p50 over one kept-alive TLS connection). The task
/// starts on the request's own thread and runs there until it first waits (`Task.immediate`), so
/// that a request that waits for nothing (a point read, the roles and class settings from their
/// caches) is answered without handing its work to another thread and back.
///
/// WebSocket connections are upgraded before the router and are not bound by it.
struct RequestDeadlineMiddleware<Context: RequestContext>: RouterMiddleware {
    /// How long a request may run.
    let timeout: Duration
    /// The requests under way and their deadlines.
    let deadlines: RequestDeadlines

    /// A middleware giving each request `timeout`.
    init(timeout: Duration) {
        self.timeout = timeout
        self.deadlines = RequestDeadlines(interval: min(timeout / 10, .milliseconds(100)))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let timeout = self.timeout
        let deadlines = self.deadlines
        return try await withoutActuallyEscaping(next) { next in
            // The handler's task never outlives this call: its result is awaited on every path.
            let handler = UncheckedHandler(call: next)
            // Its deadline counts from before it starts: it runs on this thread until it first
            // waits, and a long stretch without waiting (a loop that checks for cancellation
            // between steps) is stopped as one that waits.
            let running = RunningHandler()
            let ticket = deadlines.start(after: timeout) { running.cancel() }
            // The request's own cancellation (a graceful shutdown) reaches the handler the same
            // way, from its first step.
            let outcome = await withTaskCancellationHandler {
                let task = Task.immediate {
                    running.entered()
                    defer { running.left() }
                    return try await handler.call(request, context)
                }
                running.attach(task)
                return await task.result
            } onCancel: {
                running.cancel()
            }
            guard !deadlines.finish(ticket) else {
                throw RooftopError(
                    .timeout,
                    "the request did not finish within \(timeout) and was stopped: ask for less at a time (a smaller limit, fewer includes), or retry later"
                )
            }
            return try outcome.get()
        }
    }

    /// The rest of the middleware chain, carried into the handler's task. Hummingbird runs it
    /// from whichever task calls it; it is called once, and never after `handle` returns.
    private struct UncheckedHandler: @unchecked Sendable {
        let call: (Request, Context) async throws -> Response
    }
}

/// The task a request's handler runs in, for its deadline to cancel: the task itself while it
/// runs on the request's thread before its handle exists (``entered()``), its handle once the
/// middleware has it (``attach(_:)``). A cancellation asked for before either is applied by the
/// first of them.
final class RunningHandler: Sendable {
    private enum State {
        case starting
        /// Running on the request's thread: used only under the lock, which ``left()`` takes
        /// before the task ends.
        case running(UnsafeCurrentTask)
        case attached(Task<Response, any Error>)
        case cancelRequested
        case finished
    }

    /// `UnsafeCurrentTask` is not `Sendable`: it is stored and touched only under the lock, while
    /// its task runs.
    private struct Guarded: @unchecked Sendable {
        var state: State
    }

    private let guarded = Mutex(Guarded(state: .starting))

    /// Where the task stands (tests): `running`, `attached`, `cancelRequested`, `finished` or
    /// `starting`.
    var stateName: String {
        guarded.withLock { guarded in
            switch guarded.state {
            case .starting: "starting"
            case .running: "running"
            case .attached: "attached"
            case .cancelRequested: "cancelRequested"
            case .finished: "finished"
            }
        }
    }

    /// Called by the task as it starts: a cancellation already asked for applies at once.
    func entered() {
        withUnsafeCurrentTask { current in
            guard let current else { return }
            guarded.withLock { guarded in
                switch guarded.state {
                case .cancelRequested: current.cancel()
                case .starting: guarded.state = .running(current)
                case .running, .attached, .finished: break
                }
            }
        }
    }

    /// Called by the task as its handler ends.
    func left() {
        guarded.withLock { guarded in
            if case .running = guarded.state { guarded.state = .finished }
        }
    }

    /// The task's handle, once it has been made.
    func attach(_ task: Task<Response, any Error>) {
        let cancelled = guarded.withLock { guarded in
            defer { guarded.state = .attached(task) }
            if case .cancelRequested = guarded.state { return true }
            return false
        }
        // Its cancellation handlers run outside the lock.
        if cancelled { task.cancel() }
    }

    /// Cancels the task, now or as soon as there is one to cancel.
    func cancel() {
        let attached = guarded.withLock { guarded -> Task<Response, any Error>? in
            switch guarded.state {
            case .running(let current):
                // Under the lock: the task cannot end meanwhile (``left()`` waits for it).
                current.cancel()
            case .attached(let task):
                return task
            case .starting:
                guarded.state = .cancelRequested
            case .cancelRequested, .finished:
                break
            }
            return nil
        }
        // A handle keeps its task alive: cancelled outside the lock.
        attached?.cancel()
    }
}

/// The deadlines of the requests under way, and one task that cancels those past theirs: it runs
/// while requests do, waking every `interval`.
final class RequestDeadlines: Sendable {
    private struct Running {
        let deadline: ContinuousClock.Instant
        let cancel: @Sendable () -> Void
    }

    private struct State {
        var nextTicket = 0
        var running: [Int: Running] = [:]
        /// Requests cancelled for their deadline, not finished yet.
        var expired: Set<Int> = []
        var sweeping = false
    }

    private let state = Mutex(State())
    /// How often the sweeping task looks.
    let interval: Duration

    init(interval: Duration) {
        self.interval = max(interval, .milliseconds(1))
    }

    /// Records a request whose task `cancel` stops, due within `timeout`; its ticket.
    func start(after timeout: Duration, cancel: @escaping @Sendable () -> Void) -> Int {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let (ticket, startSweeping) = state.withLock { state in
            let ticket = state.nextTicket
            state.nextTicket &+= 1
            state.running[ticket] = Running(deadline: deadline, cancel: cancel)
            let start = !state.sweeping
            state.sweeping = true
            return (ticket, start)
        }
        // Detached: it outlives the request that starts it, and takes none of its task-locals.
        if startSweeping { Task.detached { await self.sweep() } }
        return ticket
    }

    /// Forgets a finished request; whether it was cancelled for its deadline.
    func finish(_ ticket: Int) -> Bool {
        state.withLock { state in
            state.running[ticket] = nil
            return state.expired.remove(ticket) != nil
        }
    }

    /// How many requests are under way (tests).
    var runningCount: Int { state.withLock { $0.running.count } }
    /// Whether the sweeping task runs (tests: it stops once no request runs).
    var isSweeping: Bool { state.withLock { $0.sweeping } }

    /// Cancels the requests past their deadline every `interval`, until none runs.
    private func sweep() async {
        while true {
            try? await Task.sleep(for: interval)
            let now = ContinuousClock.now
            let due: [@Sendable () -> Void]? = state.withLock { state in
                guard !state.running.isEmpty else {
                    state.sweeping = false
                    return nil
                }
                var due: [@Sendable () -> Void] = []
                for (ticket, running) in state.running where running.deadline <= now && !state.expired.contains(ticket) {
                    state.expired.insert(ticket)
                    due.append(running.cancel)
                }
                return due
            }
            guard let due else { return }
            for cancel in due { cancel() }
        }
    }
}
