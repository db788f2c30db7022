import Logging
import Synchronization

/// The records a ``Logger`` made, kept for a test to read: give the code under test
/// ``logger`` (a logger of its own, no `LoggingSystem` bootstrap) and read ``records``.
///
/// ```swift
/// let logs = CapturedLogs()
/// _ = DatastoreRecord.sharingRoles(rows, datastoreKey: 7, logger: logs.logger)
/// #expect(logs.records.map(\.message) == ["a sharing role row does not read; it grants nothing"])
/// ```
public final class CapturedLogs: Sendable {
    /// One record: its level, message and metadata (rendered as text).
    public struct Record: Sendable, Equatable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let kept = Mutex<[Record]>([])

    /// No records yet.
    public init() {}

    /// The records so far, in order.
    public var records: [Record] { kept.withLock { $0 } }

    /// A logger (at `trace` level: it keeps every record) whose records this keeps.
    public var logger: Logger {
        var logger = Logger(label: "captured") { _ in Handler(logs: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ record: Record) {
        kept.withLock { $0.append(record) }
    }

    private struct Handler: LogHandler {
        let logs: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            logs.append(
                Record(
                    level: event.level, message: event.message.description,
                    metadata: merged.mapValues { "\($0)" }))
        }
    }
}
