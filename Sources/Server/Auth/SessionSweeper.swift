import Logging
import RooftopShared
import ServiceLifecycle

/// A service that sweeps at start-up and then every `interval`, until graceful shutdown.
protocol PeriodicSweeper: Service {
    /// The time between sweeps.
    var interval: Duration { get }
    /// Where the sweeper reads the time and waits.
    var clock: ServerClock { get }
    /// One sweep; it logs its own failures (the next sweep tries again).
    func sweep() async
}

extension PeriodicSweeper {
    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    await sweep()
                    try await clock.sleep(interval)
                }
            }
        } catch is CancellationError {
            // Shutting down.
        }
    }
}

/// Deletes expired sessions at start-up and then every `interval`, until graceful shutdown.
struct SessionSweeper: PeriodicSweeper {
    let storage: any Storage
    let interval: Duration
    let clock: ServerClock
    let logger: Logger

    func sweep() async {
        do {
            let removed = try await storage.deleteSessions(expiredBefore: clock.now())
            if removed > 0 { logger.info("removed expired sessions", metadata: ["count": "\(removed)"]) }
        } catch {
            logger.warning("could not remove expired sessions", metadata: ["error": "\(error)"])
        }
    }
}
