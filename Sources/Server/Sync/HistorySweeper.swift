import Logging
import RooftopShared

/// Keeps what sync retains bounded: at start-up and then every `interval`, until graceful
/// shutdown, runs a retention step (``RetentionStorage/sweepHistory(cutoff:now:)``) with the cutoff
/// `retention` before now. See docs/server.md, "Retention".
struct HistorySweeper: PeriodicSweeper {
    let storage: any RetentionStorage
    let retention: Duration
    let interval: Duration
    let clock: ServerClock
    let logger: Logger

    func sweep() async {
        do {
            let swept = try await sweepOnce()
            guard !swept.isEmpty else { return }
            logger.info(
                "swept history older than the retention",
                metadata: [
                    "datastores": "\(swept.datastores)", "tombstones": "\(swept.tombstones)",
                    "operations": "\(swept.operations)", "readerRows": "\(swept.readerRows)",
                    "mutationResults": "\(swept.mutationResults)", "readerSets": "\(swept.readerSets)",
                ])
        } catch {
            logger.warning("could not sweep old history", metadata: ["error": "\(error)"])
        }
    }

    /// One retention step at the clock's time, the cutoff `retention` before it.
    /// - Returns: What was removed.
    /// - Throws: Storage errors.
    func sweepOnce() async throws -> HistorySweep {
        let now = clock.now()
        let cutoff = Timestamp(
            millisecondsSinceEpoch: now.millisecondsSinceEpoch.addingSaturating(-retention.saturatingMilliseconds))
        return try await storage.sweepHistory(cutoff: cutoff, now: now)
    }
}
