import Foundation
import RooftopShared
import Testing

@testable import RooftopServer

/// Where one test's storage lives. It can be opened more than once, so durability can be tested
/// by closing a storage and opening the same place again. The conformance suite only sees this
/// protocol, so the same test bodies can run against any backend (SQLite now, PostgreSQL later:
/// a fixture there would own a fresh database or schema).
protocol StorageFixture: Sendable {
    /// Opens the storage, prepared (schema created or migrated); the first open starts empty.
    func open() async throws -> any Storage

    /// Removes everything the fixture created. Every storage it opened must be closed first.
    func destroy() throws
}

/// Makes a fresh fixture for one test body.
typealias StorageFixtureFactory = @Sendable () throws -> any StorageFixture

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
    let fixture = try factory()
    let storage: any Storage
    do {
        storage = try await fixture.open()
    } catch {
        try? fixture.destroy()
        throw error
    }
    do {
        let result = try await body(storage, fixture)
        try await storage.close()
        try fixture.destroy()
        return result
    } catch {
        try? await storage.close()
        try? fixture.destroy()
        throw error
    }
}
