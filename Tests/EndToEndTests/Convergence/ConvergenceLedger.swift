import Foundation
import RooftopChaos
import RooftopShared
import Synchronization

/// What the convergence harness did and heard in one run: every change a replica queued (with
/// the replica, its process life and the command), and every acknowledgement and refusal the
/// replicas' offline queues reported. The model checks read it at the end.
final class ConvergenceLedger: Sendable {
    /// A change a replica queued durably (its reply named the mutation ID).
    struct Issued: Sendable {
        var mutationId: String
        var replica: Int
        /// Which process of the replica queued it (0 for the first; in-process replicas stay 0).
        var life: Int
        var command: ChaosCommand
        /// The list element a remove or move touched, as the replica saw it.
        var element: String?
    }

    /// What the server answered, as far as the replicas heard.
    enum Outcome: Sendable, Equatable {
        case acknowledged(version: Int64)
        case rejected(code: String)
    }

    /// A merge decision a replica saw.
    struct Merge: Sendable {
        var replica: Int
        var objectId: String
        /// The mutation whose push the server answered with it; empty for the client's own.
        var mutationId: String
        var decision: MergeDecision
    }

    private struct State {
        var issued: [Issued] = []
        var merges: [Merge] = []
        var outcomes: [String: Outcome] = [:]
        var conflictingOutcomes: [String] = []
        var events = 0
    }

    private let state = Mutex(State())

    /// Records a queued change.
    func issue(_ issued: Issued) {
        state.withLock { $0.issued.append(issued) }
    }

    /// Records an event of a replica's offline queue. An acknowledgement and a refusal of the
    /// same mutation are a failure, kept for the checks.
    func record(_ event: ChaosEvent, replica: Int) {
        if let decision = event.merge {
            let merge = Merge(
                replica: replica, objectId: event.objectId ?? "", mutationId: event.mutationId, decision: decision)
            state.withLock { $0.merges.append(merge) }
            return
        }
        let outcome: Outcome? =
            if let version = event.acknowledgedVersion { .acknowledged(version: version) }
            else if let code = event.rejectedCode { .rejected(code: code) }
            else { nil }
        guard let outcome else { return }
        state.withLock { state in
            state.events += 1
            if let earlier = state.outcomes[event.mutationId], earlier != outcome {
                // Two acknowledgements of one change may name different versions only if the
                // change was applied twice.
                state.conflictingOutcomes.append("\(event.mutationId): \(earlier) then \(outcome)")
            }
            state.outcomes[event.mutationId] = outcome
        }
    }

    /// Everything queued, in order.
    var issued: [Issued] { state.withLock { $0.issued } }

    /// The merge decisions the replicas saw, in the order heard.
    var merges: [Merge] { state.withLock { $0.merges } }

    /// The outcomes heard, by mutation ID.
    var outcomes: [String: Outcome] { state.withLock { $0.outcomes } }

    /// Mutations answered twice differently.
    var conflictingOutcomes: [String] { state.withLock { $0.conflictingOutcomes } }

    /// How many acknowledgements and refusals were heard so far.
    var eventCount: Int { state.withLock { $0.events } }
}
