import Foundation
import Logging
import PostgresNIO

/// What one server process tells the others sharing its database, so that each can act for its
/// own connections: live subscribers to notify, sessions to end, caches to drop.
enum ClusterMessage: Codable, Equatable, Sendable {
    /// A change committed at `sequence` in a datastore, readable by `readers` (before or after
    /// it). `readers` is `nil` when there were too many to send: every subscriber of the datastore
    /// is then told (a pull that finds nothing new is harmless).
    case changed(datastoreKey: Int64, sequence: Int64, className: String, readers: [String]?)
    /// A session was revoked (log-out, password reset).
    case sessionRevoked(tokenHash: String)
    /// Roles or their members changed.
    case rolesChanged
    /// A class's settings changed.
    case classChanged(className: String)
    /// A datastore's sharing changed, or it was deleted.
    case datastoreChanged(datastoreKey: Int64)
    /// Sent to this process's own listener after it (re)connects: messages may have been missed
    /// meanwhile, so everything derived from them must be refreshed.
    case resync
}

/// Messages between the server processes of one database, over PostgreSQL's `NOTIFY`/`LISTEN`.
///
/// A message sent inside a write transaction (``notify(_:in:)``) is delivered when, and only if,
/// it commits, in commit order. The listener (``messages()``) holds one connection of the pool,
/// reconnects when it is lost, and then yields ``ClusterMessage/resync``.
///
/// ```swift
/// try await pool.blockingTransaction { session in
///     // ... the write ...
///     try notifier.notify(.changed(datastoreKey: 7, sequence: 42, className: "Note", readers: ["*"]), in: session)
/// }
/// for await message in notifier.messages() { ... }
/// ```
struct PostgresNotifier: Sendable {
    /// The channel every server listens on.
    static let channel = "rooftop"
    /// PostgreSQL's limit on a payload is 8,000 bytes; past this a `changed` message leaves its
    /// readers out.
    static let maxPayloadBytes = 7_000

    let pool: PostgresPool

    /// Queues `message` in the session's transaction: the others get it when it commits.
    /// - Throws: What the database answers; `internal` if the message cannot be encoded.
    func notify(_ message: ClusterMessage, in session: PostgresBlockingSession) throws {
        let payload = try Self.payload(message)
        try session.execute("SELECT pg_notify(\(Self.channel), \(payload))")
    }

    /// The JSON a message travels as, its readers left out when it would be too long.
    static func payload(_ message: ClusterMessage) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var text = String(decoding: try encoder.encode(message), as: UTF8.self)
        if text.utf8.count > maxPayloadBytes, case .changed(let key, let sequence, let className, _) = message {
            text = String(
                decoding: try encoder.encode(
                    ClusterMessage.changed(datastoreKey: key, sequence: sequence, className: className, readers: nil)),
                as: UTF8.self)
        }
        return text
    }

    /// The messages of every process (this one's included), from now on; `resync` first, once
    /// listening, and again after every reconnection. Ends when the consuming task is cancelled.
    /// - Parameter retryDelay: The wait before reconnecting after the connection is lost.
    func messages(retryDelay: Duration = .seconds(1)) -> AsyncStream<ClusterMessage> {
        let pool = self.pool
        return AsyncStream { continuation in
            let task = Task {
                while !Task.isCancelled {
                    do {
                        try await pool.client.withConnection { connection in
                            try await connection.listen(on: Self.channel) { notifications in
                                continuation.yield(.resync)
                                for try await notification in notifications {
                                    guard let message = try? JSONDecoder().decode(
                                        ClusterMessage.self, from: Data(notification.payload.utf8))
                                    else {
                                        pool.logger.warning(
                                            "ignored a cluster message it cannot read",
                                            metadata: ["payload": "\(notification.payload.prefix(200))"])
                                        continue
                                    }
                                    continuation.yield(message)
                                }
                            }
                        }
                    } catch {
                        if Task.isCancelled { break }
                        pool.logger.warning("lost the cluster channel; reconnecting", metadata: ["error": "\(error)"])
                    }
                    try? await Task.sleep(for: retryDelay)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
