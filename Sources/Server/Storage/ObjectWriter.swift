import RooftopShared
import Synchronization

/// The writes of one transaction (``Storage/writeObjects(_:)``). Used only inside the body it is
/// given to.
public protocol ObjectWriter {
    /// Applies one mutation atomically on its own (see the protocol's guarantees): when it throws,
    /// whatever it wrote is rolled back and the transaction goes on.
    /// - Throws: ``RooftopError`` when the write cannot be made (the datastore is gone); storage
    ///   errors, which should end the transaction.
    func write(
        _ request: ObjectWriteRequest, decide: (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) throws -> ObjectWriteOutcome

    /// Records `result` as the first result of its mutation ID in `scope`, unless one is recorded
    /// already; returns the recorded one. For refusals decided before the transaction (invalid
    /// input, no access to the datastore), so that a retry gets them too.
    func record(_ result: MutationResult, scope: String) throws -> MutationResult

    /// Takes, before any write, the locks the writes of `requests` need (a backend whose writers
    /// run at once locks their objects, in one order every transaction follows, so that two
    /// pushes writing the same objects in different orders never wait for each other in a
    /// cycle), and may read ahead, in a few statements, what those writes will read (their
    /// datastores, objects and the results recorded for their mutation IDs). Optional: a write
    /// takes its own locks, and reads what it needs, when this was not called.
    /// - Throws: What the database answers.
    func lock(_ requests: [ObjectWriteRequest]) throws

    /// Where this transaction's changes land in their datastores' feeds once it commits (see
    /// ``FeedNumbering``); `nil` when a written object's sequence is final already (SQLite,
    /// whose one writer numbers changes as it makes them).
    var numbering: FeedNumbering? { get }
}

extension ObjectWriter {
    /// Sequences are final when written (see ``ObjectWriter/numbering``).
    public var numbering: FeedNumbering? { nil }

    /// No locks to take: one writer at a time (SQLite).
    public func lock(_ requests: [ObjectWriteRequest]) throws {}
}

/// Where a write transaction's changes land in their datastores' feeds.
///
/// A backend whose writers run at once (PostgreSQL) numbers a transaction's changes only at its
/// end, under its datastores' row locks held until commit, so that changes commit in sequence
/// order without the writers of a datastore waiting for each other meanwhile. Until then a
/// written object carries a provisional sequence: `-1` for the transaction's first change in
/// its datastore, `-2` for the next, and so on. Once the transaction commits, the change
/// numbered `-i` is the datastore's change `base + i`, `base` being the datastore's sequence
/// before the transaction's changes:
///
/// ```swift
/// let (outcome, numbering) = try await storage.writeObjects { writer in
///     (try writer.write(request, decide: decide), writer.numbering)
/// }
/// if case .written(let stored, _, _) = outcome {
///     let sequence = numbering?.committed(stored.sequence, datastoreKey: request.datastoreKey) ?? stored.sequence
/// }
/// ```
public final class FeedNumbering: Sendable {
    private let bases = Mutex<[Int64: Int64]>([:])

    /// An empty numbering.
    public init() {}

    /// Records where a datastore's changes start: its sequence before this transaction's.
    func settle(datastoreKey: Int64, base: Int64) {
        bases.withLock { $0[datastoreKey] = base }
    }

    /// The sequence a change written with `sequence` committed at: `sequence` itself when it is
    /// not provisional (or the transaction did not settle that datastore: it never committed).
    public func committed(_ sequence: Int64, datastoreKey: Int64) -> Int64 {
        guard sequence < 0, let base = bases.withLock({ $0[datastoreKey] }) else { return sequence }
        let (committed, overflow) = base.subtractingReportingOverflow(sequence)
        return overflow ? sequence : committed
    }
}
