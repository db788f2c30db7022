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
        try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "CREATE TABLE records (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
        }
        let encoder = JSONEncoder()
        let records = try dataset.objects.map { ($0.objectId, String(decoding: try encoder.encode($0.fields), as: UTF8.self)) }
        let clock = ContinuousClock()

        try await measure("sqlite insert", unit: "row") { samples in
            let start = clock.now
            try await pool.write { db in
                let insert = try db.makeStatement(sql: "INSERT INTO records (id, body) VALUES (?, ?)")
                for (id, body) in records { try insert.execute(arguments: [id, body]) }
            }
            await samples.add([clock.now - start])
            return (records.count, [:])
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
