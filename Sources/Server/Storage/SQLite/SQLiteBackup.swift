import Foundation
import GRDB
import RooftopShared

/// What a backup holds, as checked after writing it (or before restoring it).
public struct BackupReport: Sendable, Equatable, CustomStringConvertible {
    /// The backup file.
    public var path: String
    /// Its size in bytes.
    public var bytes: Int
    /// The schema migrations it has, in order (a restore needs them all known to this server).
    public var migrations: [String]
    /// Objects stored, deleted ones (tombstones) included.
    public var objects: Int
    /// User accounts.
    public var users: Int
    /// Datastores.
    public var datastores: Int

    /// One line for operators.
    public var description: String {
        "\(path): \(bytes) bytes, \(migrations.count) migrations, \(objects) objects, \(users) users, "
            + "\(datastores) datastores, integrity ok"
    }
}

/// Online backups and restores of the embedded SQLite storage.
///
/// A backup copies the database with SQLite's backup API inside one read transaction: in WAL
/// mode that is a consistent snapshot (every transaction committed before it began, none after)
/// while the server goes on writing. The copy is then checked (`PRAGMA integrity_check`, the
/// migrations, counts). A restore checks the backup the same way, then replaces the database
/// file (written beside it and renamed into place, with the old WAL removed), and only while no
/// server holds the data directory.
///
/// ```swift
/// let report = try SQLiteBackup.backup(databaseAt: "data/rooftop.sqlite", to: "/backups/monday.sqlite")
/// try SQLiteBackup.restore(from: "/backups/monday.sqlite", to: "data/rooftop.sqlite")
/// ```
public enum SQLiteBackup {
    /// Copies the database at `source` to `destination` (which must not exist) and checks the copy.
    /// - Throws: `illegalArgument` when the source does not exist or the destination does;
    ///   `internal` (with the SQLite error) when copying fails — a partial copy is removed;
    ///   what ``verify(_:)`` throws.
    public static func backup(databaseAt source: String, to destination: String) throws -> BackupReport {
        let files = FileManager.default
        guard files.fileExists(atPath: source) else {
            throw RooftopError(.illegalArgument, "no database at \(source)")
        }
        guard !files.fileExists(atPath: destination) else {
            throw RooftopError(.illegalArgument, "\(destination) exists; choose a new file for the backup")
        }
        do {
            try copy(try DatabasePool(path: source, configuration: readOnly()), to: destination)
        } catch {
            try? files.removeItem(atPath: destination)
            throw RooftopError(.internal, "the backup failed: \(error)", cause: error)
        }
        return try verify(destination)
    }

    /// Checks a backup (or any database file): SQLite's integrity check, migrations this server
    /// knows, and what it holds.
    /// - Throws: `illegalArgument` when the file is not a sound Rooftop database.
    public static func verify(_ path: String) throws -> BackupReport {
        do {
            let queue = try DatabaseQueue(path: path, configuration: readOnly())
            defer { try? queue.close() }
            return try queue.read { db in
                let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard integrity == ["ok"] else {
                    throw RooftopError(
                        .illegalArgument, "\(path) fails SQLite's integrity check: \(integrity.prefix(5).joined(separator: "; "))")
                }
                guard try db.tableExists("grdb_migrations") else {
                    throw RooftopError(.illegalArgument, "\(path) is not a Rooftop database (no migrations)")
                }
                let migrations = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
                let unknown = SQLiteMigrations.unknown(migrations)
                guard unknown.isEmpty else {
                    throw RooftopError(
                        .illegalArgument,
                        "\(path) has migrations this server does not know (it comes from a newer version): "
                            + unknown.joined(separator: ", "))
                }
                let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                return BackupReport(
                    path: path, bytes: bytes, migrations: migrations,
                    objects: try Int.fetchOne(db, sql: "SELECT count(*) FROM objects") ?? 0,
                    users: try Int.fetchOne(db, sql: "SELECT count(*) FROM users") ?? 0,
                    datastores: try Int.fetchOne(db, sql: "SELECT count(*) FROM datastores") ?? 0)
            }
        } catch let error as RooftopError {
            throw error
        } catch {
            throw RooftopError(.illegalArgument, "\(path) cannot be read as a database: \(error)", cause: error)
        }
    }

    /// Replaces the database at `destination` with the backup at `source`, after checking it.
    /// The caller makes sure no server uses the database (``DataDirectoryLock``).
    /// - Parameter replacing: Whether an existing database may be replaced (default `false`).
    /// - Throws: `illegalArgument` for a backup that fails ``verify(_:)``, or an existing
    ///   database without `replacing`; `internal` when writing fails (the old database is then
    ///   left as it was).
    @discardableResult
    public static func restore(from source: String, to destination: String, replacing: Bool = false) throws
        -> BackupReport
    {
        let report = try verify(source)
        let files = FileManager.default
        if files.fileExists(atPath: destination), !replacing {
            throw RooftopError(.illegalArgument, "a database exists at \(destination); restore with --force to replace it")
        }
        let staging = destination + ".restoring"
        try? files.removeItem(atPath: staging)
        do {
            try copy(try DatabaseQueue(path: source, configuration: readOnly()), to: staging)
            // The old WAL and shared memory belong to the old file: they must not be replayed
            // over the restored one. Checkpointed first, so that the old file is whole should
            // the replacement below fail.
            if files.fileExists(atPath: destination) {
                let old = try DatabaseQueue(path: destination)
                try old.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                try old.close()
            }
            for suffix in ["-wal", "-shm"] where files.fileExists(atPath: destination + suffix) {
                try files.removeItem(atPath: destination + suffix)
            }
            if files.fileExists(atPath: destination) {
                _ = try files.replaceItemAt(URL(fileURLWithPath: destination), withItemAt: URL(fileURLWithPath: staging))
            } else {
                try files.moveItem(atPath: staging, toPath: destination)
            }
        } catch {
            try? files.removeItem(atPath: staging)
            throw RooftopError(.internal, "the restore failed: \(error)", cause: error)
        }
        return report
    }

    /// Copies `source` to a new database file at `path` with SQLite's backup API, in one read
    /// transaction of the source (a consistent snapshot), and closes both.
    private static func copy(_ source: some DatabaseReader, to path: String) throws {
        defer { try? source.close() }
        try PrivateDatabaseFile.prepare(path)
        let destination = try DatabaseQueue(path: path)
        try source.backup(to: destination)
        try destination.close()
    }

    private static func readOnly() -> Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        return configuration
    }
}
