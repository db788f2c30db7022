import RooftopShared
import Synchronization

/// What the offline queue remembers in memory: acknowledged mutations (their rows are gone from
/// the store) and mutations a rebase folded into an earlier queued mutation of the same object
/// (their fate is that mutation's).
///
/// Both are remembered while the client lives; after a restart an acknowledged mutation's status
/// is unknown (`nil`).
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

    /// Records an acknowledgement; returns the mutations folded into it, which share it.
    @discardableResult
    func acknowledge(_ id: MutationID, version: Int64) -> [MutationID] {
        state.withLock { state in
            state.acknowledged[id] = version
            let folded = state.foldedInto.removeValue(forKey: id) ?? []
            for other in folded {
                state.acknowledged[other] = version
                state.folded[other] = nil
            }
            return folded
        }
    }

    /// The mutations folded into a refused one; they keep pointing at it, so their status
    /// reads as its refusal.
    func settle(_ id: MutationID) -> [MutationID] {
        state.withLock { $0.foldedInto.removeValue(forKey: id) ?? [] }
    }

    /// Records that `ids` were folded into `survivor` by a rebase.
    func fold(_ ids: [MutationID], into survivor: MutationID) {
        guard !ids.isEmpty else { return }
        state.withLock { state in
            for id in ids {
                state.folded[id] = survivor
                let carried = state.foldedInto.removeValue(forKey: id) ?? []
                state.foldedInto[survivor, default: []] += [id] + carried
                for other in carried { state.folded[other] = survivor }
            }
        }
    }

    /// The mutations folded into `id`, which share its fate.
    func folded(into id: MutationID) -> [MutationID] {
        state.withLock { $0.foldedInto[id] ?? [] }
    }
}
