import Foundation
import GRDB
import RooftopSQLite
import RooftopShared

extension Benchmark {
    /// Phases `sqlite insert`, `sqlite scan` and `sqlite get`: the physical limits the Rooftop
    /// figures are read against, measured in the same run, on the same disk, with the same
    /// records. The data set's objects (their fields as the JSON the wire carries) go into a plain
    /// two-column SQLite table in one transaction, are read back in key order, and are fetched one
    /// by one by primary key — through GRDB, in WAL mode with `synchronous = FULL`, as the server
    /// stores. ``Report`` prints each Rooftop rate as a share of them.
    /// - Parameter directory: Where the scratch database goes (removed afterwards).
    func measureSQLiteLimits(in directory: String) async throws {
        let path = directory + "/physical-limits.sqlite"
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        var configuration = Configuration()
        configuration.prepareDatabase { db in RooftopSQLite.registerFunctions(db) }
        let pool = try DatabasePool(path: path, configuration: configuration)
        let createRecords = "CREATE TABLE records (id TEXT PRIMARY KEY, body TEXT NOT NULL)"
        try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: createRecords)
        }
        let encoder = JSONEncoder()
        let records = try dataset.objects.map { ($0.objectId, String(decoding: try encoder.encode($0.fields), as: UTF8.self)) }
        let clock = ContinuousClock()

        // Three times, each into an empty table, and the median taken: one transaction's commit
        // syncs the whole log (tens of MiB at 100,000 records), and how long the disk takes for
        // that varied 2.6-fold between runs of the same build (79,000-209,000 rows/s).
        try await measure("sqlite insert", unit: "row") { samples in
            var durations: [Duration] = []
            for repetition in 0..<Benchmark.insertRepetitions {
                if repetition > 0 {
                    try await pool.writeWithoutTransaction { db in
                        try db.execute(sql: "DROP TABLE records")
                        try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                        try db.execute(sql: createRecords)
                    }
                }
                let start = clock.now
                try await pool.write { db in
                    let insert = try db.makeStatement(sql: "INSERT INTO records (id, body) VALUES (?, ?)")
                    for (id, body) in records { try insert.execute(arguments: [id, body]) }
                }
                durations.append(clock.now - start)
            }
            await samples.add(durations)
            let sorted = durations.map(\.seconds).sorted()
            return (
                records.count,
                [
                    Benchmark.timedSeconds: sorted[sorted.count / 2],
                    "slowest repetition ms": 1000 * sorted[sorted.count - 1],
                    "fastest repetition ms": 1000 * sorted[0],
                ]
            )
        }
        // The floor of one caller's durable enqueues: one row per transaction, each commit
        // synced before the next begins, as `saveEventually()` is on disk before it returns.
        try await measure("sqlite synced commit", unit: "commit") { samples in
            let commits = min(records.count, Benchmark.syncedCommits)
            let durations = try await pool.writeWithoutTransaction { db -> [Duration] in
                try db.execute(sql: "CREATE TABLE commits (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
                let insert = try db.makeStatement(sql: "INSERT INTO commits (id, body) VALUES (?, ?)")
                var durations: [Duration] = []
                durations.reserveCapacity(commits)
                for (id, body) in records.prefix(commits) {
                    let start = clock.now
                    try db.inTransaction {
                        try insert.execute(arguments: [id, body])
                        return .commit
                    }
                    durations.append(clock.now - start)
                }
                return durations
            }
            await samples.add(durations)
            return (commits, [:])
        }
        try await measure("sqlite scan", unit: "row") { samples in
            let start = clock.now
            let (count, bytes) = try await pool.read { db -> (Int, Int) in
                var count = 0
                var bytes = 0
                let rows = try Row.fetchCursor(db, sql: "SELECT id, body FROM records ORDER BY id")
                while let row = try rows.next() {
                    let body: String = row["body"]
                    count += 1
                    bytes += body.utf8.count
                }
                return (count, bytes)
            }
            await samples.add([clock.now - start])
            try require(count == records.count, "the scan read \(count) of \(records.count) rows")
            return (count, ["MiB read": Double(bytes) / 1_048_576])
        }
        try await measureRawQueries(pool)
        let lookups = (0..<min(records.count, 10_000)).map { _ in records[Int(random.next() % UInt64(records.count))].0 }
        try await measure("sqlite get", unit: "row") { samples in
            let durations = try await pool.read { db -> [Duration] in
                let select = try db.makeStatement(sql: "SELECT body FROM records WHERE id = ?")
                var durations: [Duration] = []
                durations.reserveCapacity(lookups.count)
                for id in lookups {
                    let start = clock.now
                    guard try String.fetchOne(select, arguments: [id]) != nil else {
                        throw BenchmarkError.wrongResult("no record \(id)")
                    }
                    durations.append(clock.now - start)
                }
                return durations
            }
            await samples.add(durations)
            return (lookups.count, [:])
        }
    }
}
