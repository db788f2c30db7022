import Logging
import NIOPosix
import PostgresNIO
import Synchronization

/// One PostgreSQL transaction driven by synchronous code.
///
/// The storage's write path is synchronous: a push's decisions (``WriteDecider``) run between the
/// reads and writes of its transaction, as they do inside GRDB's closure on SQLite. On PostgreSQL
/// that body runs on a thread of the pool's own (never an event loop), and each query waits for
/// its answer there, while the driver does the I/O on its event loop.
///
/// ```swift
/// let total = try await pool.blockingTransaction { session in
///     try session.execute("UPDATE counters SET n = n + 1 WHERE id = 1")
///     return try session.query("SELECT n FROM counters WHERE id = 1").first?.decode(Int64.self) ?? 0
/// }
/// ```
final class PostgresBlockingSession: Sendable {
    private let connection: PostgresConnection
    let logger: Logger
    /// The statements run so far: each is a round trip to the database.
    let statementsRun = Atomic<Int>(0)

    fileprivate init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Runs a query and returns its rows, waiting for them.
    /// - Throws: What the database answers.
    func query(_ query: PostgresQuery) throws -> [PostgresRow] {
        statementsRun.add(1, ordering: .relaxed)
        return Array(try connection.query(query, logger: logger).wait().rows)
    }

    /// Runs a query and calls `body` with its rows in order, `batch` at a time as they arrive: the
    /// driver reads ahead at most about a batch, so memory stays flat however many rows the query
    /// finds (the shared evaluator's candidates may be every object of a class). When `body`
    /// throws, the rest of the rows are read and dropped, and the error is thrown.
    /// - Throws: What the database answers, or what `body` throws.
    func forEachRow(_ query: PostgresQuery, batch: Int = 500, _ body: (PostgresRow) throws -> Void) throws {
        statementsRun.add(1, ordering: .relaxed)
        let (connection, logger) = (self.connection, self.logger)
        let cursor = RowCursor()
        try connection.eventLoop.makeFutureWithTask {
            cursor.iterator = try await connection.query(query, logger: logger).makeAsyncIterator()
        }.wait()
        var failure: (any Error)?
        while true {
            let rows = try connection.eventLoop.makeFutureWithTask { () -> [PostgresRow] in
                var rows: [PostgresRow] = []
                while rows.count < batch, let row = try await cursor.iterator?.next() { rows.append(row) }
                return rows
            }.wait()
            if failure == nil {
                do {
                    for row in rows { try body(row) }
                } catch {
                    failure = error
                }
            }
            if rows.count < batch { break }
        }
        if let failure { throw failure }
    }

    /// The iterator of a query's rows, kept between the batches ``forEachRow(_:batch:_:)`` reads
    /// (each read on the connection's event loop, one after the other).
    private final class RowCursor: @unchecked Sendable {
        var iterator: PostgresRowSequence.AsyncIterator?
    }

    /// Runs a statement, waiting for it; returns the rows it changed (0 when it does not say).
    /// - Throws: What the database answers.
    @discardableResult
    func execute(_ query: PostgresQuery) throws -> Int {
        statementsRun.add(1, ordering: .relaxed)
        return try connection.query(query, logger: logger).wait().metadata.rows ?? 0
    }

    /// Runs a prepared statement, preparing it on this connection the first time, and returns
    /// its rows, waiting for them.
    /// - Throws: What the database answers.
    func run<Statement: PostgresPreparedStatement>(_ statement: Statement) throws -> [Statement.Row]
    where Statement.Row: Sendable {
        statementsRun.add(1, ordering: .relaxed)
        let connection = self.connection
        let logger = self.logger
        return try connection.eventLoop.makeFutureWithTask {
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }.wait()
    }

    /// Runs `body` on a leased connection, on one of `threads`: in a transaction when `begin` is
    /// given (committed when `body` returns, rolled back when it throws), otherwise each statement
    /// on its own.
    fileprivate static func run<T: Sendable>(
        client: PostgresClient, threads: NIOThreadPool, logger: Logger, begin: PostgresQuery?,
        _ body: @escaping @Sendable (PostgresBlockingSession) throws -> T
    ) async throws -> T {
        try await client.withConnection { connection in
            let session = PostgresBlockingSession(connection: connection, logger: logger)
            return try await threads.runIfActive {
                guard let begin else { return try body(session) }
                try session.execute(begin)
                do {
                    let value = try body(session)
                    try session.execute("COMMIT")
                    return value
                } catch {
                    // A connection whose rollback fails is broken: the pool's next use finds out.
                    _ = try? session.execute("ROLLBACK")
                    throw error
                }
            }
        }
    }
}

extension PostgresPool {
    /// Runs `body` in one transaction, synchronously on a thread of the pool's own
    /// (``PostgresBlockingSession``): committed when it returns, rolled back when it throws.
    /// - Parameter begin: The statement that starts it (default `BEGIN`: read committed).
    /// - Throws: What `body` throws, or what the database answers.
    func blockingTransaction<T: Sendable>(
        begin: PostgresQuery = "BEGIN", _ body: @escaping @Sendable (PostgresBlockingSession) throws -> T
    ) async throws -> T {
        try await PostgresBlockingSession.run(client: client, threads: threads, logger: logger, begin: begin, body)
    }

    /// Runs `body`'s statements each on its own (no transaction), synchronously on a thread of the
    /// pool's own: for reads that one statement answers.
    /// - Throws: What `body` throws, or what the database answers.
    func blockingRead<T: Sendable>(_ body: @escaping @Sendable (PostgresBlockingSession) throws -> T) async throws -> T {
        try await PostgresBlockingSession.run(client: client, threads: threads, logger: logger, begin: nil, body)
    }
}
