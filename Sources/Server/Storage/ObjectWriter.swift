import RooftopShared

/// The writes of one transaction (``ObjectStorage/writeObjects(_:)``). Used only inside the body it is
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
    /// datastores, objects, the results recorded for their mutation IDs, and the operations
    /// since a request's base version where the object is newer: a merge's). Optional: a write
    /// takes its own locks, and reads what it needs, when this was not called.
    /// - Throws: What the database answers.
    func lock(_ requests: [ObjectWriteRequest]) throws
}

extension ObjectWriter {
    /// No locks to take: one writer at a time (SQLite).
    public func lock(_ requests: [ObjectWriteRequest]) throws {}
}
