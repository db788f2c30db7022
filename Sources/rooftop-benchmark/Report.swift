import Foundation

/// The results of a run, printed as a table for people or as JSON (`--json`) for machines.
struct Report: Codable, Sendable {
    /// The phases that create objects, for the disk used per object.
    static let creatingPhases: Set<String> = ["push create", "pull 100 new", "single create"]

    /// `in-process` or `server-binary`.
    var mode: String
    /// How the benchmark itself was compiled (`debug` or `release`); in-process, the server too.
    var buildConfiguration: String
    /// What the memory columns cover.
    var memoryScope: String
    /// The run's sizes.
    var settings: BenchmarkSettings
    /// The limits raised for the run (not measured: the defaults would refuse big data sets).
    var limits: [String: Int]
    /// Each phase's figures.
    var phases: [PhaseJSON]
    /// The SQLite files after the server stopped, in bytes (name → size).
    var databaseFiles: [String: Int]
    /// Whether the server stopped cleanly before the database was measured.
    var serverStoppedCleanly: Bool

    /// One phase in the JSON output: the figures of ``PhaseResult`` with percentiles computed.
    struct PhaseJSON: Codable, Sendable {
        var name: String
        var count: Int
        var unit: String
        var totalSeconds: Double
        var ratePerSecond: Double
        var samples: Int
        var p50Milliseconds: Double?
        var p95Milliseconds: Double?
        var p99Milliseconds: Double?
        var maxMilliseconds: Double?
        var memoryBefore: MemoryReading?
        var memoryAfter: MemoryReading?
        var serverMemoryBefore: MemoryReading?
        var serverMemoryAfter: MemoryReading?
        var notes: [String: Double]

        init(_ result: PhaseResult) {
            name = result.name
            count = result.count
            unit = result.unit
            totalSeconds = result.totalSeconds
            ratePerSecond = result.rate
            samples = result.samplesMilliseconds.count
            p50Milliseconds = result.percentile(50)
            p95Milliseconds = result.percentile(95)
            p99Milliseconds = result.percentile(99)
            maxMilliseconds = result.samplesMilliseconds.last
            memoryBefore = result.memoryBefore
            memoryAfter = result.memoryAfter
            serverMemoryBefore = result.serverMemoryBefore
            serverMemoryAfter = result.serverMemoryAfter
            notes = result.notes
        }
    }

    /// The report as pretty-printed JSON with sorted keys.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The report as a table with a header and notes.
    func table() -> String {
        var lines: [String] = []
        let s = settings
        lines.append(
            "rooftop-benchmark: \(mode), \(buildConfiguration) build; objects \(s.objects), batch \(s.batch),"
                + " clients \(s.clients), fields/object \(s.fieldsPerObject), list size \(s.listSize),"
                + " text \(s.textLength) letters,"
                + " updates \(s.updates), queries \(s.queryRepeats), page size \(s.pageSize), seed \(s.seed),"
                + " indexes \(s.indexes.map { $0.joined(separator: ",") }.joined(separator: ";")),"
                + " queue saves \(s.queueSaves), local repeats \(s.localRepeats), local shapes "
                + (s.localShapes.isEmpty ? "all" : s.localShapes.joined(separator: ","))
                + (s.bulkInitialSync ? ", bulk initial sync" : ""))
        lines.append(memoryScope)
        let header = [
            pad("phase", 25, left: true), pad("count", 7), pad("total s", 9), pad("rate", 19), pad("p50 ms", 9),
            pad("p95 ms", 9), pad("p99 ms", 9), "  RSS MiB before→after (peak)",
        ]
        lines.append(header.joined())
        lines.append(String(repeating: "-", count: 109))
        for phase in phases {
            let memory =
                phase.serverMemoryAfter == nil
                ? (phase.memoryBefore, phase.memoryAfter)
                : (phase.serverMemoryBefore, phase.serverMemoryAfter)
            let rss: String
            if let before = memory.0, let after = memory.1 {
                rss =
                    "  \(Report.mebibytes(before.residentBytes))→\(Report.mebibytes(after.residentBytes))"
                    + " (\(Report.mebibytes(after.peakBytes)))"
            } else {
                rss = "  n/a"
            }
            let row = [
                pad(phase.name, 25, left: true), pad(String(phase.count), 7),
                pad(Report.fixed(phase.totalSeconds, 2), 9),
                pad(Report.fixed(phase.ratePerSecond, 1) + " \(phase.unit)/s", 19),
                pad(phase.p50Milliseconds.map { Report.fixed($0, 1) } ?? "-", 9),
                pad(phase.p95Milliseconds.map { Report.fixed($0, 1) } ?? "-", 9),
                pad(phase.p99Milliseconds.map { Report.fixed($0, 1) } ?? "-", 9), rss,
            ]
            lines.append(row.joined())
        }
        lines.append("")
        for phase in phases where !phase.notes.isEmpty {
            let notes = phase.notes.sorted { $0.key < $1.key }.map { "\($0.key) \(Report.fixed($0.value, 2))" }
            lines.append("\(phase.name): \(notes.joined(separator: ", "))")
        }
        if let last = phases.last(where: { $0.serverMemoryAfter?.fileBytes != nil }), let reading = last.serverMemoryAfter,
            let files = reading.fileBytes
        {
            lines.append(
                "server RSS after \(last.name): \(Report.mebibytes(reading.residentBytes)) MiB, of which "
                    + "\(Report.mebibytes(files)) MiB pages of mapped files (the executable, and the database read "
                    + "through a memory map: cached file pages, shared and reclaimable)")
        }
        lines += physicalLimitLines()
        let total = databaseFiles.values.reduce(0, +)
        let files = databaseFiles.sorted { $0.key < $1.key }.map { "\($0.key) \(Report.mebibytes($0.value)) MiB" }
        lines.append(
            "database on disk after the run: \(Report.mebibytes(total)) MiB (\(files.joined(separator: ", ")))"
                + (serverStoppedCleanly ? "" : " — the server did not stop cleanly; the WAL may not be checkpointed"))
        let stored = phases.filter { Report.creatingPhases.contains($0.name) }.map(\.count).reduce(0, +)
        if stored > 0 {
            lines.append(
                "disk per object: \(Report.fixed(Double(total) / Double(stored), 0)) bytes (\(stored) objects created,"
                    + " with everything kept for sync)")
        }
        lines.append("latencies are per request (a push of `batch` mutations, a pull page, a query), client-side")
        return lines.joined(separator: "\n")
    }

    /// Each Rooftop rate as a share of the physical limit measured in the same run: creates
    /// against rows inserted into plain SQLite in one transaction, pulls against rows scanned,
    /// the client's pull against both (it reads from the server and writes its own file).
    func physicalLimitLines() -> [String] {
        let rates = Dictionary(phases.map { ($0.name, $0.ratePerSecond) }, uniquingKeysWith: { first, _ in first })
        let pairs: [(String, String)] = [
            ("push create", "sqlite insert"), ("push update", "sqlite insert"), ("pull full", "sqlite scan"),
            ("pull incremental", "sqlite scan"), ("client pull", "sqlite insert"), ("client queue", "sqlite insert"),
            // With the servers on PostgreSQL: the same phases against PostgreSQL's own rates.
            ("push create", "postgres insert"), ("push update", "postgres insert"), ("pull full", "postgres scan"),
            ("pull incremental", "postgres scan"),
        ]
        var lines: [String] = []
        // "`what` at x% of `limit` (rate vs bound per second)", when the limit was measured.
        func share(_ what: String, _ rate: Double, of limit: String) {
            guard let bound = rates[limit], bound > 0 else { return }
            lines.append(
                "\(what) at \(Report.fixed(100 * rate / bound, 2))% of \(limit)"
                    + " (\(Report.fixed(rate, 0)) vs \(Report.fixed(bound, 0)) per second)")
        }
        for (phase, limit) in pairs {
            if let rate = rates[phase] { share(phase, rate, of: limit) }
        }
        // The queue's durable enqueues (each `saveEventually()` on disk before it returns), and
        // against the synced commits one caller could make at most.
        for phase in phases where phase.name.hasPrefix("client queue") {
            guard let rate = phase.notes[Benchmark.durableEnqueues] else { continue }
            for limit in ["sqlite insert", "sqlite synced commit"] { share("\(phase.name) durable enqueues", rate, of: limit) }
        }
        for shape in LocalQueryShape.all {
            guard let local = phases.first(where: { $0.name == shape.localPhase })?.p50Milliseconds,
                let raw = phases.first(where: { $0.name == shape.rawPhase })?.p50Milliseconds, raw > 0
            else { continue }
            // A ratio against an index the class was not given is the cost of reading without
            // one: said beside it, with the declaration that would give it.
            let undeclared = shape.rawIndexedField.flatMap { field in
                settings.indexes.contains { $0.first == field } ? nil : field
            }
            lines.append(
                "\(shape.localPhase) p50 \(Report.fixed(local, 2)) ms vs the raw SQLite query \(Report.fixed(raw, 2)) ms"
                    + " (\(Report.fixed(local / raw, 1))×"
                    + (undeclared.map { "; \($0) is indexed in the raw table, not declared for the class: --indexes …;\($0)" } ?? "")
                    + ")")
        }
        if let get = phases.first(where: { $0.name == "sqlite get" }), let p50 = get.p50Milliseconds {
            lines.append("sqlite get: a primary-key lookup takes \(Report.fixed(p50 * 1000, 1)) µs (p50)")
        }
        if let get = phases.first(where: { $0.name == "postgres get" }), let p50 = get.p50Milliseconds {
            lines.append("postgres get: a primary-key lookup, one round trip, takes \(Report.fixed(p50 * 1000, 1)) µs (p50)")
        }
        return lines.isEmpty ? [] : ["physical limits, measured in this run:"] + lines.map { "  " + $0 }
    }

    /// A progress line on standard error (standard output stays for the report).
    static func progress(_ line: String) {
        FileHandle.standardError.write(Data(("[rooftop-benchmark] " + line + "\n").utf8))
    }

    /// `value` with `digits` decimals.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        String(format: "%.\(digits)f", value)
    }

    /// Bytes as MiB with one decimal.
    static func mebibytes(_ bytes: Int) -> String {
        fixed(Double(bytes) / 1_048_576, 1)
    }

    private func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(width - text.count, 0))
        return left ? text + padding : padding + text
    }
}
