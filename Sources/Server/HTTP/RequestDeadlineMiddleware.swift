import Hummingbird
import RooftopShared

/// Gives every HTTP request a deadline: when the handler has not answered within `timeout`, its
/// task is cancelled and the request is answered `503` with code `timeout`.
///
/// Cancellation is cooperative: SQLite statements stop at once (GRDB interrupts a cancelled
/// task's statement), a PostgreSQL statement runs to its end (postgres-nio does not cancel one in
/// flight), and the loops that a request can make long (includes, removal by query) check for it
/// between steps. Work committed before the deadline stays committed — each
/// mutation and each removed object is its own transaction — so a retry (a push with the same
/// mutation IDs, the same removal) finishes the rest and never applies anything twice. No
/// request can hold the server past its deadline, nor keep a graceful shutdown waiting longer.
///
/// WebSocket connections are upgraded before the router and are not bound by it.
struct RequestDeadlineMiddleware<Context: RequestContext>: RouterMiddleware {
    /// How long a request may run.
    let timeout: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let timeout = self.timeout
        return try await withoutActuallyEscaping(next) { next in
            // The handler runs in a child task so that the deadline can cancel it; the closure
            // does not outlive this call (the group waits for its children).
            let handler = UncheckedHandler(call: next)
            return try await withThrowingTaskGroup(of: Response?.self) { group in
                group.addTask { try await handler.call(request, context) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                if let first = try await group.next(), let response = first {
                    return response
                }
                throw RooftopError(
                    .timeout,
                    "the request did not finish within \(timeout) and was stopped: ask for less at a time (a smaller limit, fewer includes), or retry later"
                )
            }
        }
    }

    /// The rest of the middleware chain, carried into the handler's child task. Hummingbird runs
    /// it from whichever task calls it; it is called once, and never after `handle` returns.
    private struct UncheckedHandler: @unchecked Sendable {
        let call: (Request, Context) async throws -> Response
    }
}
