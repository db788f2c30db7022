import Foundation
import Testing

/// One server process (and a client for it) shared by every test of a suite, so that a suite
/// pays for one start-up. Tests that share a server must not interfere: each uses fresh users,
/// roles and classes (``Unique/name(_:)``).
///
/// ```swift
/// @Suite(.sharedServer) struct AccessTests {
///     @Test func something() async throws {
///         let (server, client) = try SharedServer.current()
///     }
/// }
/// ```
struct SharedServerTrait: SuiteTrait, TestScoping {
    var extraArguments: [String] = []

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withServerAndClient(extraArguments: extraArguments) { server, client in
            try await SharedServer.$context.withValue(SharedServer.Context(server: server, client: client)) {
                try await function()
            }
        }
    }
}

extension Trait where Self == SharedServerTrait {
    /// Starts one server for the whole suite.
    static var sharedServer: Self { SharedServerTrait() }
}

/// The suite's shared server, for tests running under ``SharedServerTrait``.
enum SharedServer {
    struct Context: Sendable {
        var server: ServerProcess
        var client: APIClient
    }

    @TaskLocal static var context: Context?

    /// The shared server and client.
    /// - Throws: When the suite lacks the `.sharedServer` trait.
    static func current() throws -> (ServerProcess, APIClient) {
        guard let context else { throw FixtureError("this suite needs the .sharedServer trait") }
        return (context.server, context.client)
    }
}
