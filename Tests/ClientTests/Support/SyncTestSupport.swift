import Foundation
@testable import Rooftop
import RooftopShared
import RooftopTestSupport

/// A client over the fake server, with a test clock and a fixed retry jitter (0.5: no spread).
func syncClient(
    _ server: SyncFakeServer, clock: TestClock = TestClock(), storage: LocalStorage = .inMemory,
    retry: RetryPolicy = .default
) throws -> RooftopClient {
    var configuration = ClientConfiguration(serverURL: URL(fileURLWithPath: "/"))
    configuration.storage = storage
    configuration.clock = clock
    configuration.retry = retry
    return try RooftopClient(configuration: configuration, transport: server, random: { 0.5 })
}

extension RooftopClient {
    /// Signs up (on the fake server the user's ID is `u<n>`; on the real one, random).
    func signUpForTest(_ username: String) async throws -> UserInfo {
        try await signUp(username: username, password: "secret-password")
    }
}
