import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import RooftopServer

/// Synchronous transactions on PostgreSQL (what the storage's write path needs), and the way the
/// storage is to number changes: under the datastore's row lock, so that they commit in order.
@Suite("PostgreSQL: synchronous transactions")
struct PostgresBlockingSessionTests {
    private let logger = Logger(label: "postgres-blocking-tests")

    private struct Refused: Error {}

    /// Set once the writers are done.
    private final class Flag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    @Test("a transaction commits what it did; a throw undoes all",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func commitAndRollback() async throws {
        try await PostgresTestCluster.withPools(connections: 2, logger: logger) { pools in
            let pool = pools[0]
            try await pool.client.query("CREATE TABLE t (id integer PRIMARY KEY)")
            try await pool.blockingTransaction { session in
                try session.execute("INSERT INTO t VALUES (1)")
                try session.execute("INSERT INTO t VALUES (3)")
            }
            await #expect(throws: Refused.self) {
                try await pool.blockingTransaction { session in
                    try session.execute("INSERT INTO t VALUES (4)")
                    throw Refused()
                }
            }
            let ids = try await pool.blockingTransaction { session in
                try session.query("SELECT id FROM t ORDER BY id").map { try $0.decode(Int.self) }
            }
            #expect(ids == [1, 3])
        }
    }

    /// A statement prepared by ``PostgresBlockingSession/run(_:)``.
    struct AddOne: PostgresRowStatement {
        static let sql = "SELECT $1::bigint + 1"
        var value: Int64

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(value)
            return bindings
        }
    }

    @Test("a prepared statement is prepared once per connection, then only executed",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func preparedStatements() async throws {
        try await PostgresTestCluster.withPools(connections: 1, logger: logger) { pools in
            let pool = pools[0]
            let (sums, prepared) = try await pool.blockingTransaction { session in
                let sums = try (1...3).map { value in try session.run(AddOne(value: value)).first?.decode(Int64.self) }
                let names = try session.query("SELECT name FROM pg_prepared_statements").map { try $0.decode(String.self) }
                return (sums, names)
            }
            #expect(sums == [2, 3, 4])
            #expect(prepared == [String(reflecting: AddOne.self)], "one preparation for three runs: \(prepared)")
            // The next transaction on the same connection finds it prepared already.
            let again = try await pool.blockingTransaction { session in
                (
                    try session.run(AddOne(value: 41)).first?.decode(Int64.self),
                    try session.query("SELECT count(*) FROM pg_prepared_statements").first?.decode(Int64.self)
                )
            }
            #expect(again.0 == 42 && again.1 == 1)
        }
    }

    @Test("sequences taken under the row lock commit in order: a reader never sees a gap",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func commitOrderedSequences() async throws {
        try await PostgresTestCluster.withPools(connections: 8, logger: logger) { pools in
            let pool = pools[0]
            try await pool.client.query("CREATE TABLE datastores (key integer PRIMARY KEY, sequence bigint NOT NULL)")
            try await pool.client.query("CREATE TABLE feed (sequence bigint PRIMARY KEY)")
            try await pool.client.query("INSERT INTO datastores VALUES (1, 0)")
            let writers = 8
            let perWriter = 25
            let done = Flag()
            let observations = try await withThrowingTaskGroup(of: [(count: Int64, last: Int64)].self) { group in
                group.addTask {
                    // The reader: each snapshot must hold every sequence up to its largest.
                    var seen: [(count: Int64, last: Int64)] = []
                    for _ in 0..<10_000 {
                        let finished = done.isSet
                        let rows = try await pool.client.query("SELECT count(*), coalesce(max(sequence), 0) FROM feed")
                        for try await (count, last) in rows.decode((Int64, Int64).self) { seen.append((count, last)) }
                        if finished { break }
                    }
                    return seen
                }
                try await withThrowingTaskGroup(of: Void.self) { writersGroup in
                    for _ in 0..<writers {
                        writersGroup.addTask {
                            for _ in 0..<perWriter {
                                try await pool.blockingTransaction { session in
                                    let sequence = try session.query(
                                        "UPDATE datastores SET sequence = sequence + 1 WHERE key = 1 RETURNING sequence"
                                    ).first?.decode(Int64.self) ?? -1
                                    // Work between taking the number and committing, as a write does.
                                    try session.execute("SELECT pg_sleep(0.001)")
                                    try session.execute("INSERT INTO feed VALUES (\(sequence))")
                                }
                            }
                        }
                    }
                    try await writersGroup.waitForAll()
                }
                done.set()
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(observations.count > 10, "the reader looked \(observations.count) times")
            #expect(observations.allSatisfy { $0.count == $0.last }, "a gap: \(observations.filter { $0.count != $0.last }.prefix(3))")
            #expect(observations.last.map { $0.last == Int64(writers * perWriter) } == true)
        }
    }
}
