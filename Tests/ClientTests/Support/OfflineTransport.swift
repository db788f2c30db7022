import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization

/// A transport with no server behind it: every request fails with `noConnection`, as when the
/// device is offline. It counts the attempts.
final class OfflineTransport: HTTPTransport {
    private let attempts = Mutex(0)

    var requestCount: Int { attempts.withLock { $0 } }

    func send(_ request: TransportRequest) async throws(RooftopError) -> TransportResponse {
        attempts.withLock { $0 += 1 }
        throw RooftopError(.noConnection, "offline (test transport)")
    }

    func shutdown() async {}
}

/// A client over an offline transport with an in-memory (or file) store.
func offlineClient(storage: LocalStorage = .inMemory) throws -> (RooftopClient, OfflineTransport) {
    let transport = OfflineTransport()
    var configuration = ClientConfiguration(serverURL: URL(fileURLWithPath: "/"))
    configuration.storage = storage
    return (try RooftopClient(configuration: configuration, transport: transport), transport)
}

extension RooftopClient {
    /// Signs a user in locally, as a log-in answer would, with effective roles: for tests of the
    /// local datastore that run offline (ACLs evaluated with cached roles, a session kept across
    /// restarts).
    func signInLocally(_ userId: String, roles: [String] = []) throws {
        try core.begin(
            Session(
                user: UserInfo(objectId: userId, username: userId, roles: roles), sessionToken: "token-\(userId)",
                expiresAt: Timestamp(millisecondsSinceEpoch: Int64.max / 2)))
    }
}
