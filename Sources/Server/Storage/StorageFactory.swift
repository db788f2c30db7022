import Foundation
import Logging
import RooftopShared

/// Opens the storage a URL names.
public enum StorageFactory {
    /// The database file of a `sqlite:<path>` (or `sqlite://<path>`) URL; `nil` for other URLs.
    /// - Throws: `illegalArgument` for a SQLite URL without a path.
    public static func sqlitePath(url: String) throws(RooftopError) -> String? {
        guard url.hasPrefix("sqlite:") else { return nil }
        var path = String(url.dropFirst("sqlite:".count))
        if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
        guard !path.isEmpty else { throw RooftopError(.illegalArgument, "the SQLite storage URL needs a path") }
        return path
    }

    /// `sqlite:<path>` (or `sqlite://<path>`) opens the embedded SQLite storage;
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or `postgresql://`, with
    /// `?sslmode=disable|prefer|require`) the PostgreSQL storage, for several server processes.
    /// - Parameters:
    ///   - clock: The server's clock, which the storage dates what it records by (default the
    ///     system's).
    ///   - queryTimeout: How long PostgreSQL may run one query's reads (default 30 seconds, the
    ///     default request timeout): a request that gives up stops its statements too.
    /// - Throws: `illegalArgument` for an unsupported URL.
    static func open(
        url: String, clock: ServerClock = .system, queryTimeout: Duration = .seconds(30),
        logger: Logger = Logger(label: "rooftop.storage")
    ) throws -> any Storage {
        if let path = try sqlitePath(url: url) {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return try SQLiteStorage(path: path, clock: clock)
        }
        if url.hasPrefix("postgres:") || url.hasPrefix("postgresql:") {
            return try PostgresStorage(url: url, logger: logger, clock: clock, queryTimeout: queryTimeout)
        }
        throw RooftopError(
            .illegalArgument, "unsupported storage URL '\(url)': use sqlite:<path> or postgres://USER@HOST/DATABASE")
    }
}

extension RooftopError {
    /// What a server answers at start-up when its database records migrations this version does
    /// not have: a newer server migrated it, and this one would read tables the way they were
    /// before (a row no longer written, a history row no longer kept) and give wrong answers.
    /// Nothing is changed; run the newer version (upgrades go one way).
    static func newerSchema(_ unknown: [String]) -> RooftopError {
        RooftopError(
            .badState,
            "the database was migrated by a newer Rooftop server (\(unknown.sorted().joined(separator: ", "))); "
                + "this version cannot use it: run the newer server")
    }
}
