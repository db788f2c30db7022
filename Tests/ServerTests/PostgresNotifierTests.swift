import Foundation
import Logging
import PostgresNIO
import RooftopShared
import Testing

@testable import RooftopServer

/// Server processes sharing a database tell each other of changes with `NOTIFY`: delivered at
/// commit, in commit order, never for a rolled-back transaction.
@Suite("PostgreSQL: messages between servers")
struct PostgresNotifierTests {
    private let logger = Logger(label: "postgres-notifier-tests")

    private struct Refused: Error {}

    private struct TimedOut: Error, CustomStringConvertible {
        var description: String { "no message within the deadline" }
    }

    /// Runs `body`, failing it when it takes longer than `limit` (a message that never comes).
    private func withDeadline(_ limit: Duration = .seconds(30), _ body: @escaping @Sendable () async throws -> Void)
        async throws
    {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw TimedOut()
            }
            try await group.next()
            group.cancelAll()
        }
    }

    @Test("another process hears committed messages in order, and nothing of a rolled-back transaction",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func deliveredAtCommit() async throws {
        let logger = self.logger
        let sent: [ClusterMessage] = [
            .changed(datastoreKey: 7, sequence: 1, className: "Note", readers: ["*", "user:u1"]),
            .sessionRevoked(tokenHash: "abc"), .rolesChanged, .classChanged(className: "Note"),
            .datastoreChanged(datastoreKey: 7),
        ]
        try await PostgresTestCluster.withPools(2, connections: 2, logger: logger) { pools in
            let writer = pools[0]
            let reader = pools[1]
            try await withDeadline {
                let notifier = PostgresNotifier(pool: writer)
                var messages = PostgresNotifier(pool: reader).messages().makeAsyncIterator()
                #expect(await messages.next() == .resync, "listening")
                await #expect(throws: Refused.self) {
                    try await writer.blockingTransaction { session in
                        try notifier.notify(.rolesChanged, in: session)
                        throw Refused()
                    }
                }
                for message in sent {
                    try await writer.blockingTransaction { session in try notifier.notify(message, in: session) }
                }
                var heard: [ClusterMessage] = []
                while heard.count < sent.count, let message = await messages.next() { heard.append(message) }
                #expect(heard == sent, "the rolled-back message must not arrive, the others in order")
            }
        }
    }

    @Test("a listener that loses its connection reconnects and says it may have missed messages",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func reconnects() async throws {
        let logger = self.logger
        try await PostgresTestCluster.withPools(2, connections: 2, logger: logger) { pools in
            let writer = pools[0]
            let reader = pools[1]
            try await withDeadline {
                let notifier = PostgresNotifier(pool: writer)
                var messages = PostgresNotifier(pool: reader).messages(retryDelay: .milliseconds(50))
                    .makeAsyncIterator()
                #expect(await messages.next() == .resync)
                // The database ends the listening connection, as a failover or restart would.
                try await writer.client.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'")
                #expect(await messages.next() == .resync, "listening again")
                try await writer.blockingTransaction { session in try notifier.notify(.rolesChanged, in: session) }
                #expect(await messages.next() == .rolesChanged)
            }
        }
    }

    @Test("a change readable by too many principals to send goes without them")
    func longReaderLists() throws {
        let readers = (0..<1_000).map { "user:some-long-user-identifier-\($0)" }
        let payload = try PostgresNotifier.payload(
            .changed(datastoreKey: 1, sequence: 2, className: "Note", readers: readers), origin: "a")
        #expect(payload.utf8.count <= PostgresNotifier.maxPayloadBytes)
        #expect(
            try JSONDecoder().decode(ClusterEnvelope.self, from: Data(payload.utf8)).message
                == .changed(datastoreKey: 1, sequence: 2, className: "Note", readers: nil))
        let short = try PostgresNotifier.payload(
            .changed(datastoreKey: 1, sequence: 2, className: "Note", readers: ["*"]), origin: "a")
        #expect(
            try JSONDecoder().decode(ClusterEnvelope.self, from: Data(short.utf8)).message
                == .changed(datastoreKey: 1, sequence: 2, className: "Note", readers: ["*"]))
    }

    @Test("a failed log-in under the longest name key, from the longest address, fits in one notification")
    func longestLogInKeys() throws {
        // 42 × U+FDFA: 126 bytes as typed, a key of 1,386 bytes; quotes escape to two bytes each.
        let names = [
            String(repeating: "\u{FDFA}", count: SignUpRequest.maxUsernameBytes / 3),
            String(repeating: "\"", count: SignUpRequest.maxUsernameBytes),
        ]
        for name in names {
            let key = SignUpRequest.usernameKey(name)
            let keys = ThrottleKeys.logIn(usernameKey: key, address: "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255")
            let payload = try PostgresNotifier.payload(.loginFailed(keys: keys.hard + keys.soft), origin: UUID().uuidString)
            #expect(payload.utf8.count <= PostgresNotifier.maxPayloadBytes, "\(payload.utf8.count) bytes")
        }
    }
}
