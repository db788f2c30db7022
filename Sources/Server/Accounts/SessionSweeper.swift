import Logging
import RooftopShared
import ServiceLifecycle

/// Deletes expired sessions at start-up and then every `interval`, until graceful shutdown.
struct SessionSweeper: PeriodicSweeper {
    let storage: any AccountStorage
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
