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
