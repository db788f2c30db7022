import Logging
import RooftopShared
import ServiceLifecycle

/// Deletes expired sessions at start-up and then every `interval`, until graceful shutdown.
struct SessionSweeper: Service {
    let storage: any Storage
    let interval: Duration
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    await sweep()
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {
            // Shutting down.
        }
    }

    private func sweep() async {
        do {
            let removed = try await storage.deleteSessions(expiredBefore: .now)
            if removed > 0 { logger.info("removed expired sessions", metadata: ["count": "\(removed)"]) }
        } catch {
            logger.warning("could not remove expired sessions", metadata: ["error": "\(error)"])
        }
    }
}
