import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

/// Dashboard sessions kept by the server as hashes: they survive a restart with the same admin
/// key, end when the server starts with another (a rotated key), and no signing key is stored.
@Suite("Admin dashboard sessions", .timeLimit(.minutes(5)))
struct DashboardSessionTests {
    /// Runs `body` with a server on `directory` using `adminKey`, stopped whatever happens.
    static func withServer<T>(
        _ directory: String, adminKey: String, _ body: (ServerProcess, DashboardTests.Pages) async throws -> T
    ) async throws -> T {
        let server = try await ServerProcess.start(dataDirectory: directory, adminKey: adminKey)
        let pages: DashboardTests.Pages
        do {
            pages = try DashboardTests.Pages(server)
        } catch {
            await server.stop()
            throw error
        }
        do {
            let result = try await body(server, pages)
            try await pages.http.shutdown()
            await server.stop()
            return result
        } catch {
            try? await pages.http.shutdown()
            await server.stop()
            throw error
        }
    }

    @Test("a session outlives a restart with the same admin key and ends with a rotated key")
    func rotation() async throws {
        let directory = TemporaryDirectory.make(prefix: "dashboard-rotation")
        let first = ServerProcess.testAdminKey
        let second = "rotated-admin-key-" + UUID().uuidString
        let cookie = try await Self.withServer(directory, adminKey: first) { _, pages in
            let cookie = try await DashboardTests.signIn(pages)
            #expect(try await DashboardTests.request(pages, .GET, "/dashboard/overview", cookie: cookie).status == 200)
            return cookie
        }
        try await Self.withServer(directory, adminKey: first) { _, pages in
            let page = try await DashboardTests.request(pages, .GET, "/dashboard/overview", cookie: cookie)
            #expect(page.status == 200, "the same key: the session goes on")
        }
        try await Self.withServer(directory, adminKey: second) { server, pages in
            let page = try await DashboardTests.request(pages, .GET, "/dashboard/overview", cookie: cookie)
            #expect(page.status == 303 && page.headers["Location"].first == "/dashboard/login", "a rotated key ends it")
            #expect(server.adminKey == second)
            let fresh = try await DashboardTests.signIn(pages)
            #expect(try await DashboardTests.request(pages, .GET, "/dashboard/overview", cookie: fresh).status == 200)
            // Cookies that are no session: too long, a session's hash, nothing.
            for forged in [String(repeating: "a", count: 4096), "r:" + fresh.dropFirst(2).reversed(), ""] {
                let page = try await DashboardTests.request(pages, .GET, "/dashboard/overview", cookie: String(forged))
                #expect(page.status == 303)
            }
        }
    }
}
