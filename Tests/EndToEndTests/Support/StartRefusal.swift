import RooftopTestSupport
import Testing

/// Starts a server that must refuse to start: an issue is recorded when it serves, or when it
/// ends other than by exiting with a nonzero status after printing `message`.
func expectStartRefused(
    dataDirectory: String? = nil, extraArguments: [String] = [], saying message: String,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    do {
        let server = try await ServerProcess.start(
            dataDirectory: dataDirectory, extraArguments: extraArguments, deadline: .seconds(30))
        Issue.record("the server started", sourceLocation: sourceLocation)
        await server.stop()
    } catch let error as ServerLaunchError {
        guard case .exited(let status, let log) = error else {
            Issue.record("expected the server to exit: \(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(status != 0, sourceLocation: sourceLocation)
        #expect(log.contains(message), "\(log)", sourceLocation: sourceLocation)
    }
}
