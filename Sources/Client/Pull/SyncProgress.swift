import RooftopShared

/// How far a push or a pull is (Cloudant Sync's progress block: processed, total, end, error).
///
/// A pull's total comes from the server's estimate of what remains (`PullResponse.remaining`),
/// known from the first page on; it may move while others write, and equals `processed` when the
/// pull finishes. A push counts the queued changes answered (acknowledged or refused).
///
/// ```swift
/// try await client.sync.pull(datastore: .default) { progress in
///     if let fraction = progress.fractionCompleted { bar.value = fraction }
/// }
/// ```
public struct SyncProgress: Sendable, Equatable {
    /// Which direction.
    public enum Phase: String, Sendable, Hashable {
        /// Sending the offline queue.
        case push
        /// Receiving changes.
        case pull
    }

    /// Push or pull.
    public var phase: Phase
    /// The datastore, when the work is about one.
    public var datastore: DatastoreID?
    /// Changes done so far.
    public var processed: Int
    /// Changes expected in all, when known.
    public var total: Int?
    /// Whether this is the last report of the run.
    public var isFinished: Bool
    /// The error that ended the run, if it failed.
    public var error: RooftopError?

    /// A report.
    public init(
        phase: Phase, datastore: DatastoreID?, processed: Int, total: Int?, isFinished: Bool = false,
        error: RooftopError? = nil
    ) {
        self.phase = phase
        self.datastore = datastore
        self.processed = processed
        self.total = total
        self.isFinished = isFinished
        self.error = error
    }

    /// `processed / total` in 0...1, when the total is known (1 for an empty run).
    public var fractionCompleted: Double? {
        guard let total else { return nil }
        return total == 0 ? 1 : min(1, Double(processed) / Double(total))
    }
}
