import Logging
@testable import RooftopServer
import RooftopShared
import Synchronization
import Testing

/// Sessions, their expiry and the session sweeper read the time through the configuration's
/// ``ServerClock``: a test moves it instead of waiting.
@Suite("The server's injected clock")
struct ServerClockTests {
    /// A wall clock that moves only when told to.
    final class ManualTime: Sendable {
        private let current: Mutex<Timestamp>
        init(_ start: Timestamp) { current = Mutex(start) }
        func advance(by duration: Duration) {
            current.withLock { $0 = Timestamp(millisecondsSinceEpoch: $0.millisecondsSinceEpoch + duration.saturatingMilliseconds) }
        }
        var clock: ServerClock {
            ServerClock(now: { self.current.withLock { $0 } }, sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
        }
    }

    @Test("a session expires when the injected clock passes its lifetime, and the sweeper then removes it")
    func sessionsExpire() async throws {
        let time = ManualTime(Timestamp(millisecondsSinceEpoch: 1_700_000_000_000))
        try await OpenAPITestServer.with(configure: {
            $0.clock = time.clock
            $0.sessionLifetime = .seconds(60)
        }) { server in
            let auth = server.services.auth
            let session = try await auth.signUp(SignUpRequest(username: "clocked", password: "password-1"))
            #expect(session.expiresAt.millisecondsSinceEpoch == 1_700_000_060_000)
            let signedIn = try await auth.authenticate(sessionToken: session.sessionToken, adminKey: nil, clientAddress: nil)
            #expect(signedIn.context.userId == session.user.objectId)

            let sweeper = SessionSweeper(
                storage: server.storage, interval: .seconds(3600), clock: time.clock, logger: Logger(label: "test"))
            await sweeper.sweep()
            let hash = SessionToken.hash(session.sessionToken)
            #expect(try await server.storage.session(tokenHash: hash) != nil, "a live session was swept")

            time.advance(by: .seconds(61))
            await #expect(throws: RooftopError.self) {
                _ = try await auth.authenticate(sessionToken: session.sessionToken, adminKey: nil, clientAddress: nil)
            }
            await sweeper.sweep()
            #expect(try await server.storage.session(tokenHash: hash) == nil, "an expired session was kept")
        }
    }

    @Test("the log-in throttle measures its window on the configuration's clock")
    func throttleWindow() async throws {
        let instant = Mutex(ContinuousClock.now)
        try await OpenAPITestServer.with(configure: {
            $0.clock = ServerClock(
                now: { .now }, sleep: { try await Task.sleep(for: $0) }, monotonic: { instant.withLock { $0 } })
            $0.loginThrottleAttempts = 2
            $0.loginThrottleWindow = .seconds(60)
        }) { server in
            let auth = server.services.auth
            _ = try await auth.signUp(SignUpRequest(username: "throttled", password: "password-1"))
            let wrong = LogInRequest(username: "throttled", password: "wrong-password")
            for _ in 0..<2 {
                await #expect(throws: RooftopError.self) { _ = try await auth.logIn(wrong, clientAddress: "10.0.0.9") }
            }
            do {
                _ = try await auth.logIn(LogInRequest(username: "throttled", password: "password-1"), clientAddress: "10.0.0.9")
                Issue.record("a third attempt within the window was let through")
            } catch {
                #expect(RooftopError.translating(error).code == .retryLater, "\(error)")
            }
            // No real time passes: only the injected clock.
            instant.withLock { $0 = $0.advanced(by: .seconds(61)) }
            let session = try await auth.logIn(
                LogInRequest(username: "throttled", password: "password-1"), clientAddress: "10.0.0.9")
            #expect(!session.sessionToken.isEmpty)
        }
    }
}
