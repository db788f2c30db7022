import Foundation
import Logging
import PostgresNIO
import RooftopServer

extension Benchmark {
    /// Phases `postgres insert`, `postgres scan` and `postgres get`: what the PostgreSQL server
    /// does with the benchmark's records and nothing else, over one connection from this process
    /// (the same network path as the servers'), in a table of its own in the run's schema: one
    /// `INSERT` per record in one transaction (a round trip each, as the storage's statements
    /// are), a scan of them all in key order, and primary-key reads. The ratios in
    /// docs/benchmarks.md are to these.
    func measurePostgresLimits(url: String) async throws {
        var configuration = try PostgresStorage.clientConfiguration(url: url)
        configuration.options.maximumConnections = 1
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "benchmark-postgres"))
        let encoder = JSONEncoder()
        let records = try dataset.objects.map { ($0.objectId, String(decoding: try encoder.encode($0.fields), as: UTF8.self)) }
        let clock = ContinuousClock()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await client.query("CREATE TABLE physical_limits (id text PRIMARY KEY, body text NOT NULL)")
            try await measure("postgres insert", unit: "row") { samples in
                let start = clock.now
                try await client.withTransaction(logger: Logger(label: "benchmark-postgres")) { connection in
                    for (id, body) in records {
                        try await connection.query("INSERT INTO physical_limits (id, body) VALUES (\(id), \(body))", logger: Logger(label: "benchmark-postgres"))
                    }
                }
                await samples.add([clock.now - start])
                return (records.count, [:])
            }
            try await measure("postgres scan", unit: "row") { samples in
                let start = clock.now
                var count = 0
                var bytes = 0
                for try await body in try await client.query("SELECT body FROM physical_limits ORDER BY id").decode(String.self) {
                    count += 1
                    bytes += body.utf8.count
                }
                await samples.add([clock.now - start])
                try require(count == records.count, "the scan read \(count) of \(records.count) rows")
                return (count, ["MiB read": Double(bytes) / 1_048_576])
            }
            let lookups = (0..<min(records.count, 2_000)).map { _ in records[Int(random.next() % UInt64(records.count))].0 }
            try await measure("postgres get", unit: "row") { samples in
                var durations: [Duration] = []
                for id in lookups {
                    let start = clock.now
                    var found = false
                    for try await _ in try await client.query("SELECT body FROM physical_limits WHERE id = \(id)") { found = true }
                    try require(found, "no record \(id)")
                    durations.append(clock.now - start)
                }
                await samples.add(durations)
                return (lookups.count, [:])
            }
            try await client.query("DROP TABLE physical_limits")
        }
    }
}
