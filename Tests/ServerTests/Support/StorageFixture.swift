import Foundation
import GRDB
import Logging
import RooftopShared
import Testing

@testable import RooftopServer

/// Where one test's storage lives. It can be opened more than once, so durability can be tested
/// by closing a storage and opening the same place again. The conformance suite only sees this
/// protocol, so the same test bodies run against every backend (``StorageBackend``): a SQLite
/// file in a fresh directory, or a fresh PostgreSQL database.
protocol StorageFixture: Sendable {
    /// Opens the storage, prepared (schema created or migrated); the first open starts empty.
    func open() async throws -> any Storage

    /// Removes everything the fixture created. Every storage it opened must be closed first.
    func destroy() async throws
}

/// Makes a fresh fixture for one test body.
typealias StorageFixtureFactory = @Sendable () async throws -> any StorageFixture

/// The storage backends the suites run on: SQLite always, PostgreSQL when a test cluster is
/// there (``PostgresTestCluster``; required in CI).
enum StorageBackend: String, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    /// The backends to test here.
    static var tested: [StorageBackend] { PostgresTestCluster.enabled ? [.sqlite, .postgres] : [.sqlite] }

    /// Fresh fixtures of this backend.
    var factory: StorageFixtureFactory {
        switch self {
        case .sqlite: SQLiteFixture.factory
        case .postgres: PostgresFixture.factory
        }
    }

    var description: String { rawValue }
}

/// A new, empty database of its own in the test cluster, dropped by ``destroy()``.
struct PostgresFixture: StorageFixture {
    /// The database's URL.
    let url: String

    func open() async throws -> any Storage {
        let storage = try PostgresStorage(
            url: url, maximumConnections: 4, logger: Logger(label: "rooftop.storage-tests"))
        do {
            try await storage.prepare()
        } catch {
            try? await storage.close()
            throw error
        }
        return storage
    }

    func destroy() async throws {
        try await PostgresTestCluster.dropDatabase(url: url)
    }

    /// The factory for conformance tests.
    static let factory: StorageFixtureFactory = { PostgresFixture(url: try await PostgresTestCluster.createDatabase()) }
}

/// A SQLite database file in a new temporary directory.
struct SQLiteFixture: StorageFixture {
    /// The directory holding the database (and its WAL files).
    let directory: URL

    /// Creates the directory.
    /// - Throws: file system errors.
    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("rooftop-storage-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The database file's path.
    var path: String { directory.appendingPathComponent("rooftop.sqlite").path }

    func open() async throws -> any Storage {
        let storage = try SQLiteStorage(path: path)
        try await storage.prepare()
        return storage
    }

    func destroy() throws {
        try FileManager.default.removeItem(at: directory)
    }

    /// The factory for conformance tests.
    static let factory: StorageFixtureFactory = { try SQLiteFixture() }
}

/// Runs `body` with a newly opened storage from a fresh fixture, then closes the storage and
/// destroys the fixture, whether `body` succeeded or not.
func withStorage<T>(
    _ factory: StorageFixtureFactory,
    _ body: (any Storage, any StorageFixture) async throws -> T
) async throws -> T {
    let fixture = try await factory()
    let storage: any Storage
    do {
        storage = try await fixture.open()
    } catch {
        try? await fixture.destroy()
        throw error
    }
    do {
        let result = try await body(storage, fixture)
        try await storage.close()
        if let sqlite = fixture as? SQLiteFixture {
            // What counts from index keys rely on holds after every test's writes (read from
            // the file: the body may have closed its storage and opened another).
            let faults = try await DatabaseQueue(path: sqlite.path).read { try SQLiteStorage.valueIndexFaults($0) }
            #expect(faults.isEmpty, "value index rows: \(faults.prefix(10))")
        }
        try await fixture.destroy()
        return result
    } catch {
        try? await storage.close()
        try? await fixture.destroy()
        throw error
    }
}
