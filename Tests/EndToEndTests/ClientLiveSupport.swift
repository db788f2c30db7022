import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization
import RooftopTestSupport

extension StreamRecorder where Element == LiveEvent {
    /// The next `.changed` event.
    func nextChange(within limit: Duration = TestWait.patience) async throws -> (DatastoreID, Int64) {
        let event = try await next(within: limit, "a changed event") {
            if case .changed = $0 { true } else { false }
        }
        guard case .changed(let datastore, let sequence) = event else { throw FixtureError("unreachable") }
        return (datastore, sequence)
    }
}

extension LiveConnection {
    /// A started connection to a test server, trusting `trust` (default: its CA).
    static func started(
        to server: ServerProcess, token: String?, subscribing datastores: [DatastoreID], trust: TrustPolicy? = nil,
        appId: String? = nil, retry: RetryPolicy = RetryPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200), jitter: 0)
    ) async throws -> (LiveConnection, StreamRecorder<LiveEvent>) {
        var configuration = try ClientTransportFixture.configuration(server, trust: trust)
        configuration.retry = retry
        if let appId { configuration.appId = appId }
        let live = try LiveConnection(configuration: configuration, token: token)
        let recorder = StreamRecorder<LiveEvent>(live.events)
        await live.subscribe(datastores)
        await live.start()
        return (live, recorder)
    }
}
