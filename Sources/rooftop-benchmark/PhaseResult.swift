/// The figures of one benchmark phase: how many operations, how long in all, the latency of each
/// timed request, memory before and after, and phase-specific notes (pages, bytes, merges).
struct PhaseResult: Sendable, Codable {
    /// The phase's name in the table (`push create`, `query eq`, ...).
    var name: String
    /// How many operations the rate counts (mutations, objects, queries).
    var count: Int
    /// What ``count`` counts, for the rate's unit (`mut`, `obj`, `req`).
    var unit: String
    /// Wall-clock time of the whole phase, in seconds.
    var totalSeconds: Double
    /// Latency of each timed request, in milliseconds, sorted ascending.
    var samplesMilliseconds: [Double]
    /// This process's memory before and after the phase (client and server together in-process).
    var memoryBefore: MemoryReading?
    /// See ``memoryBefore``.
    var memoryAfter: MemoryReading?
    /// The server process's memory before and after the phase (`--server-binary` mode only).
    var serverMemoryBefore: MemoryReading?
    /// See ``serverMemoryBefore``.
    var serverMemoryAfter: MemoryReading?
    /// Extra figures, printed after the table (name → value).
    var notes: [String: Double] = [:]

    /// Operations per second over the whole phase.
    var rate: Double { totalSeconds > 0 ? Double(count) / totalSeconds : 0 }

    /// The `percent`-th percentile of the samples (nearest rank on the sorted samples), or `nil`
    /// without samples.
    func percentile(_ percent: Double) -> Double? {
        Self.percentile(percent, ofSorted: samplesMilliseconds)
    }

    /// Nearest-rank percentile: the smallest sample with at least `percent`% of the samples at or
    /// below it. `sorted` must be ascending.
    static func percentile(_ percent: Double, ofSorted sorted: [Double]) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((percent / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

/// Collects the latencies of a phase's requests; shared by the concurrent clients of a phase.
actor SampleCollector {
    private var samples: [Double] = []

    /// Adds request latencies.
    func add(_ durations: [Duration]) {
        samples += durations.map(\.milliseconds)
    }

    /// Every sample so far, sorted ascending.
    func sorted() -> [Double] { samples.sorted() }

    /// The median of the first and of the last tenth of the samples, in the order they were
    /// added, when there are at least 20: a per-request cost that grows with the data shows as
    /// a last tenth slower than the first.
    func trend() -> (first: Double, last: Double)? {
        guard samples.count >= 20 else { return nil }
        let tenth = samples.count / 10
        func median(_ slice: ArraySlice<Double>) -> Double {
            PhaseResult.percentile(50, ofSorted: slice.sorted()) ?? 0
        }
        return (median(samples.prefix(tenth)), median(samples.suffix(tenth)))
    }
}

extension Duration {
    /// The duration in (fractional) milliseconds.
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// The duration in (fractional) seconds.
    var seconds: Double { milliseconds / 1000 }
}
