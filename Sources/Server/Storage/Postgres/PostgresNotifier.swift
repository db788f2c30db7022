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
    /// Log-ins failed for these throttle keys (user names, client addresses).
    case loginFailed(keys: [String])
    /// A log-in succeeded: the keys' failures are forgotten.
    case loginSucceeded(keys: [String])
    /// Sent to this process's own listener after it (re)connects: messages may have been missed
    /// meanwhile, so everything derived from them must be refreshed.
    case resync
}

/// A message as it travels: with the process that sent it, so that it does not act on its own.
struct ClusterEnvelope: Codable, Sendable {
    var origin: String
    var message: ClusterMessage
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
    /// The channel every server of the deployment listens on: `rooftop`, or `rooftop_SCHEMA` for
    /// one in a schema of its own (channels are per database, not per schema).
    var channel: String { pool.schema.map { "rooftop_" + $0 } ?? "rooftop" }
    /// PostgreSQL's limit on a payload is 8,000 bytes; past this a `changed` message leaves its
    /// readers out.
    static let maxPayloadBytes = 7_000

    let pool: PostgresPool
    /// This process's name in its messages (its own are not delivered back to it).
    let origin: String

    /// A notifier for one process (`origin`: a new random name by default).
    init(pool: PostgresPool, origin: String = UUID().uuidString) {
        self.pool = pool
        self.origin = origin
    }

    /// Queues `message` in the session's transaction: the others get it when it commits.
    /// - Throws: What the database answers; `internal` if the message cannot be encoded.
    func notify(_ message: ClusterMessage, in session: PostgresBlockingSession) throws {
        try notify([message], in: session)
    }

    /// Queues messages in the session's transaction, in one statement.
    /// - Throws: What the database answers; `internal` if a message cannot be encoded.
    func notify(_ messages: [ClusterMessage], in session: PostgresBlockingSession) throws {
        guard !messages.isEmpty else { return }
        let payloads = try messages.map { try payload($0) }
        try session.execute("SELECT pg_notify(\(channel), p) FROM unnest(\(payloads)::text[]) AS p")
    }

    /// Sends `message` now, outside any transaction (after the change it reports committed).
    /// - Throws: What the database answers.
    func send(_ message: ClusterMessage) async throws {
        let payload = try payload(message)
        try await pool.client.query("SELECT pg_notify(\(channel), \(payload))", logger: pool.logger)
    }

    /// The JSON a message travels as (in its envelope), its readers left out when it would be too
    /// long.
    func payload(_ message: ClusterMessage) throws -> String {
        try Self.payload(message, origin: origin)
    }

    /// The JSON `message` travels as from `origin`.
    static func payload(_ message: ClusterMessage, origin: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var text = String(decoding: try encoder.encode(ClusterEnvelope(origin: origin, message: message)), as: UTF8.self)
        if text.utf8.count > maxPayloadBytes, case .changed(let key, let sequence, let className, _) = message {
            let short = ClusterMessage.changed(datastoreKey: key, sequence: sequence, className: className, readers: nil)
            text = String(decoding: try encoder.encode(ClusterEnvelope(origin: origin, message: short)), as: UTF8.self)
        }
        return text
    }

    /// The messages of every other process, from now on; `resync` first, once listening, and again
    /// after every reconnection. Ends when the consuming task is cancelled.
    /// - Parameter retryDelay: The wait before reconnecting after the connection is lost.
    func messages(retryDelay: Duration = .seconds(1)) -> AsyncStream<ClusterMessage> {
        let pool = self.pool
        let origin = self.origin
        let channel = self.channel
        return AsyncStream { continuation in
            let task = Task {
                while !Task.isCancelled {
                    do {
                        try await pool.client.withConnection { connection in
                            try await connection.listen(on: channel) { notifications in
                                continuation.yield(.resync)
                                for try await notification in notifications {
                                    guard let envelope = try? JSONDecoder().decode(
                                        ClusterEnvelope.self, from: Data(notification.payload.utf8))
                                    else {
                                        pool.logger.warning(
                                            "ignored a cluster message it cannot read",
                                            metadata: ["payload": "\(notification.payload.prefix(200))"])
                                        continue
                                    }
                                    if envelope.origin != origin { continuation.yield(envelope.message) }
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
