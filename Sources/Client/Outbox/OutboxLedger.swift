import RooftopShared
import Synchronization

/// What the offline queue remembers in memory: the acknowledged mutations, whose rows are gone
/// from the store, with the version each gave its object.
///
/// Remembered while the client lives; after a restart an acknowledged mutation's status is
/// unknown (`nil`). The mutations a rebase folded into an earlier queued mutation of the same
/// object share its answer: which they are is kept in the store, with that mutation's row
/// (``OutboxRow/folded``) and then its refusal (``RejectedChange/foldedMutationIds``), written
/// in the transactions that fold and answer them, so that it outlives the process and a failed
/// transaction leaves it as it was.
final class OutboxLedger: Sendable {
    private let acknowledged = Mutex<[MutationID: Int64]>([:])

    /// The version an acknowledged mutation gave its object.
    func acknowledgedVersion(_ id: MutationID) -> Int64? {
        acknowledged.withLock { $0[id] }
    }

    /// Records an acknowledgement, shared by the mutations folded into it (`folded`, its row's),
    /// inside the transaction that removes its row (a status reads the row first).
    func acknowledge(_ id: MutationID, version: Int64, folded: [MutationID] = []) {
        acknowledged.withLock { acknowledged in
            for other in [id] + folded { acknowledged[other] = version }
        }
    }
}
