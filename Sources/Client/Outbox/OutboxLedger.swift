import RooftopShared
import Synchronization

/// What the offline queue remembers in memory: acknowledged mutations (their rows are gone from
/// the store) and mutations a rebase folded into an earlier queued mutation of the same object
/// (their fate is that mutation's).
///
/// Both are remembered while the client lives; after a restart an acknowledged mutation's status
/// is unknown (`nil`). Folds are also kept with the row they were folded into
/// (``OutboxRow/folded``) and its refusal, which outlive the process: the ledger is their
/// in-memory index, and learns a kept fold again when its row is answered.
final class OutboxLedger: Sendable {
    private struct State {
        var acknowledged: [MutationID: Int64] = [:]
        var folded: [MutationID: MutationID] = [:]
        var foldedInto: [MutationID: [MutationID]] = [:]
    }

    private let state = Mutex(State())

    /// The version an acknowledged mutation gave its object.
    func acknowledgedVersion(_ id: MutationID) -> Int64? {
        state.withLock { $0.acknowledged[id] }
    }

    /// The mutation whose fate a folded mutation shares (itself when not folded).
    func survivor(of id: MutationID) -> MutationID {
        state.withLock { state in
            var current = id
            // Folds chain when a survivor is itself folded by a later rebase; bounded by the map.
            for _ in 0...state.folded.count {
                guard let next = state.folded[current] else { break }
                current = next
            }
            return current
        }
    }

    /// Notes the version an acknowledged mutation gave its object, before its row leaves the
    /// queue (``acknowledge(_:version:)`` records the rest once it has).
    func noteAcknowledged(_ id: MutationID, version: Int64) {
        state.withLock { $0.acknowledged[id] = version }
    }

    /// Records an acknowledgement; returns the mutations folded into it, which share it: those
    /// the ledger knows, then those of `kept` (the row's own list, ``OutboxRow/folded``) it did
    /// not know (folded before a restart).
    @discardableResult
    func acknowledge(_ id: MutationID, version: Int64, folded kept: [MutationID] = []) -> [MutationID] {
        state.withLock { state in
            state.acknowledged[id] = version
            let folded = Self.union(state.foldedInto.removeValue(forKey: id) ?? [], kept)
            for other in folded {
                state.acknowledged[other] = version
                state.folded[other] = nil
            }
            return folded
        }
    }

    /// The mutations folded into a refused one, as ``acknowledge(_:version:folded:)`` finds
    /// them; they keep pointing at it, so their status reads as its refusal (which lists them).
    func settle(_ id: MutationID, folded kept: [MutationID] = []) -> [MutationID] {
        state.withLock { state in
            let folded = Self.union(state.foldedInto.removeValue(forKey: id) ?? [], kept)
            for other in folded { state.folded[other] = id }
            return folded
        }
    }

    /// `first`, then the IDs of `second` it lacks, in order.
    private static func union(_ first: [MutationID], _ second: [MutationID]) -> [MutationID] {
        guard !second.isEmpty else { return first }
        var seen = Set(first)
        return first + second.filter { seen.insert($0).inserted }
    }

    /// Records that `ids` were folded into `survivor` by a rebase (with what was folded into
    /// them before, which `ids` may already name).
    func fold(_ ids: [MutationID], into survivor: MutationID) {
        guard !ids.isEmpty else { return }
        state.withLock { state in
            for id in ids {
                let carried = state.foldedInto.removeValue(forKey: id) ?? []
                state.foldedInto[survivor] = Self.union(state.foldedInto[survivor] ?? [], [id] + carried)
                for other in [id] + carried { state.folded[other] = survivor }
            }
        }
    }

    /// The mutations folded into `id`, which share its fate: those the ledger knows, then those
    /// of `kept` (the row's own list) it does not.
    func folded(into id: MutationID, kept: [MutationID] = []) -> [MutationID] {
        state.withLock { Self.union($0.foldedInto[id] ?? [], kept) }
    }
}
