import Testing
import RooftopTestSupport

/// One server (and client) shared by all tests of a suite whose tests do not interfere (each
/// signs up its own users and uses its own datastores or classes), started once around the
/// suite by the ``Trait/sharedServer(_:)`` trait and reached through ``SharedServer/current``.
///
/// ```swift
/// @Suite(.sharedServer()) struct PushTests {
///     @Test func something() async throws {
///         let (server, client) = try SharedServer.require()
///     }
/// }
/// ```
enum SharedServer {
    /// The suite's server and client.
    struct Context: Sendable {
        var server: ServerProcess
        var client: APIClient
    }

    @TaskLocal static var current: Context?

    /// The suite's server and client.
    /// - Throws: When the test does not run inside a suite with the `sharedServer` trait.
    static func require() throws -> (ServerProcess, APIClient) {
        guard let current else { throw FixtureError("this test needs the .sharedServer() suite trait") }
        return (current.server, current.client)
    }
}

/// Starts one server for the whole suite, and stops it when the suite is done.
struct SharedServerTrait: SuiteTrait, TestScoping {
    let extraArguments: [String]

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Suites nested in a suite that already has a server keep the outer one.
        if SharedServer.current != nil {
            try await function()
            return
        }
        try await withServerAndClient(extraArguments: extraArguments) { server, client in
            try await SharedServer.$current.withValue(.init(server: server, client: client)) {
                try await function()
            }
            #expect(server.isRunning, "the shared server died during the suite; log:\n\(server.log)")
        }
    }
}

extension Trait where Self == SharedServerTrait {
    /// One server for the whole suite, started with `extraArguments` (e.g. small limits).
    static func sharedServer(_ extraArguments: [String] = []) -> Self {
        SharedServerTrait(extraArguments: extraArguments)
    }
}
