import Foundation
import Hummingbird
@testable import RooftopServer
import RooftopShared

/// A server's services over a fresh SQLite file (or PostgreSQL database), assembled as
/// ``RooftopServer/start`` does, and the router they serve. ``with(_:)`` removes everything
/// afterwards.
struct OpenAPITestServer {
    /// The application ID requests must carry.
    static let appId = "openapi-tests"
    /// The admin key.
    static let adminKey = "openapi-tests-admin-key"

    let configuration: ServerConfiguration
    let storage: any Storage
    let services: ServerServices

    /// The router `RooftopServer` serves.
    func router() -> Router<RooftopRequestContext> {
        APIRouter(services: services, configuration: configuration).build()
    }

    /// Runs `body` with a server over a temporary directory, closed and removed afterwards;
    /// `configure` adjusts the configuration first.
    /// - Parameter backend: Where the storage is (default SQLite, in the directory; PostgreSQL:
    ///   a new database of the test cluster, dropped afterwards).
    static func with<T>(
        backend: StorageBackend = .sqlite, configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (OpenAPITestServer) async throws -> T
    ) async throws -> T {
        try await OpenAPITestSupport.withTemporaryDirectory { directory in
            var configuration = ServerConfiguration()
            configuration.dataDirectory = directory.path
            configuration.appId = appId
            configuration.adminKey = adminKey
            // The lowest bcrypt cost keeps sign-ups fast; the cost is not what these tests check.
            configuration.bcryptCost = 4
            configure(&configuration)
            let database = backend == .postgres ? try await PostgresTestCluster.createDatabase() : nil
            let outcome: Result<T, any Error>
            do {
                let storage: any Storage =
                    if let database {
                        try PostgresStorage(url: database, maximumConnections: 4, clock: configuration.clock)
                    } else {
                        try SQLiteStorage(
                            path: directory.appendingPathComponent("rooftop.sqlite").path, clock: configuration.clock)
                    }
                do {
                    try await storage.prepare()
                    let adminKeyHash = try await AdminKey.resolve(
                        configured: configuration.adminKey, storage: storage, output: { _ in })
                    _ = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
                    let services = try await ServerServices.make(
                        storage: storage, configuration: configuration, adminKeyHash: adminKeyHash)
                    let result = try await body(
                        OpenAPITestServer(configuration: configuration, storage: storage, services: services))
                    try await storage.close()
                    outcome = .success(result)
                } catch {
                    try? await storage.close()
                    throw error
                }
            } catch {
                outcome = .failure(error)
            }
            if let database { try await PostgresTestCluster.dropDatabase(url: database) }
            return try outcome.get()
        }
    }
}
