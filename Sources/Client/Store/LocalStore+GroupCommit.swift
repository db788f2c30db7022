import GRDB
import RooftopSQLite
import RooftopShared
import Synchronization

/// Group commit: writes of concurrent callers that each must be durable before they return
/// (`saveEventually()`) share one transaction, and so one wait for the disk.
///
/// A caller hands its write over. The first caller to find no leader leads: it takes the writes
/// handed over so far (at most ``LocalStore/maxGroup``), runs them in one transaction, each in
/// its own savepoint (a write that throws is undone alone, and only its caller hears the error;
/// a write alone in its transaction needs none),
/// commits once and answers every caller; it goes on until its own write is committed, then
/// hands the lead to the first write still waiting (whose caller leads from then on), so that no
/// caller leads for others indefinitely. A caller alone is its own leader, in one transaction as
/// ``LocalStore/write(scope:_:committed:)``.
extension LocalStore {
    /// One caller's write, waiting for a leader.
    struct GroupedWrite: Sendable {
        /// The write; what it returns is called after the commit when it succeeded.
        let body: @Sendable (StoreTransaction) throws -> @Sendable () -> Void
        let scope: String
        /// Tells the caller its write is committed or failed, or that it leads now.
        let turn: @Sendable (GroupTurn) -> Void
        /// Tells apart writes of one value.
        let id = GroupedWriteID()
    }

    /// An identity for a grouped write.
    final class GroupedWriteID: Sendable {}

    /// What a waiting caller is told.
    enum GroupTurn: Sendable {
        /// Its write was committed (or failed).
        case done(Result<Void, RooftopError>)
        /// It leads: the writes waiting, its own among them, are its to commit.
        case lead
    }

    /// The writes handed over and whether a caller leads.
    struct GroupQueue: Sendable {
        var waiting: [GroupedWrite] = []
        var leading = false
    }

    /// The most writes one transaction takes.
    static let maxGroup = 64

    /// Runs `body` in a write transaction shared with the writes of other callers waiting at the
    /// same time, durable before it returns; `committed` runs after the commit, before the change
    /// is published.
    /// - Throws: What `body` throws (its own changes are undone, the others' kept), or `cache`
    ///   when the transaction fails (no change of the group is kept).
    func writeGrouped<T: Sendable>(
        scope: String, _ body: @escaping @Sendable (StoreTransaction) throws -> T,
        committed: (@Sendable (T) -> Void)? = nil
    ) async throws(RooftopError) -> T {
        let value = Mutex<T?>(nil)
        let turns = TurnBox()
        let write = GroupedWrite(
            body: { transaction in
                let result = try body(transaction)
                value.withLock { $0 = result }
                return { committed?(result) }
            },
            scope: scope, turn: { turns.send($0) })
        var leads = handOver(write)
        while true {
            if leads { lead(until: write.id) }
            switch await turns.next() {
            case .lead:
                leads = true
            case .done(.failure(let error)):
                throw error
            case .done(.success):
                guard let result = value.withLock({ $0 }) else {
                    throw RooftopError(.internal, "a grouped write lost its result")
                }
                return result
            }
        }
    }

    /// Hands a write over; `true` when no caller leads (the caller leads then).
    func handOver(_ write: GroupedWrite) -> Bool {
        group.withLock { queue in
            queue.waiting.append(write)
            guard !queue.leading else { return false }
            queue.leading = true
            return true
        }
    }

    /// Commits the writes waiting, a group per transaction, until the write `own` is; then hands
    /// the lead to the first write still waiting, if any.
    func lead(until own: GroupedWriteID) {
        while true {
            let writes: [GroupedWrite] = group.withLock { queue in
                let taken = Array(queue.waiting.prefix(LocalStore.maxGroup))
                queue.waiting.removeFirst(taken.count)
                return taken
            }
            if !writes.isEmpty { commit(writes) }
            guard writes.isEmpty || writes.contains(where: { $0.id === own }) else { continue }
            let next: GroupedWrite? = group.withLock { queue in
                guard let first = queue.waiting.first else {
                    queue.leading = false
                    return nil
                }
                return first
            }
            next?.turn(.lead)
            return
        }
    }

    /// A caller's turns: sent by the leader, awaited by the caller (a turn sent before the caller
    /// waits is kept for it).
    final class TurnBox: Sendable {
        private struct State {
            var pending: [GroupTurn] = []
            var waiter: CheckedContinuation<GroupTurn, Never>?
        }
        private let state = Mutex(State())

        func send(_ turn: GroupTurn) {
            let waiter: CheckedContinuation<GroupTurn, Never>? = state.withLock { state in
                guard let waiter = state.waiter else {
                    state.pending.append(turn)
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: turn)
        }

        func next() async -> GroupTurn {
            await withCheckedContinuation { continuation in
                let ready: GroupTurn? = state.withLock { state in
                    guard !state.pending.isEmpty else {
                        state.waiter = continuation
                        return nil
                    }
                    return state.pending.removeFirst()
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// One transaction for `writes`, each in a savepoint; then every caller is answered. A write
    /// alone in its transaction needs no savepoint: if it throws, the transaction undoes only its
    /// own changes (a caller saving one change at a time is the common case).
    private func commit(_ writes: [GroupedWrite]) {
        if writes.count == 1, let only = writes.first {
            do throws(RooftopError) {
                var committed: (@Sendable () -> Void)?
                try write(scope: only.scope, { transaction in committed = try only.body(transaction) }) { committed?() }
            } catch {
                return only.turn(.done(.failure(error)))
            }
            return only.turn(.done(.success(())))
        }
        // Filled by the transaction, read after it (the same thread).
        final class Outcomes: @unchecked Sendable {
            var list: [Result<@Sendable () -> Void, RooftopError>]
            init(_ count: Int) {
                list = Array(repeating: .failure(RooftopError(.internal, "a grouped write did not run")), count: count)
            }
        }
        let outcomes = Outcomes(writes.count)
        do throws(RooftopError) {
            try write(
                scope: "",
                { transaction in
                    for (index, write) in writes.enumerated() {
                        let own = StoreTransaction(db: transaction.db, scope: write.scope)
                        own.start(from: transaction)
                        do {
                            let committed = try transaction.db.inPreparedSavepoint {
                                let committed = try write.body(own)
                                try own.finish()
                                return committed
                            }
                            outcomes.list[index] = .success(committed)
                            transaction.record(own.change)
                            transaction.adoptReads(of: own)
                        } catch let error as RooftopError {
                            outcomes.list[index] = .failure(error)
                        } catch {
                            outcomes.list[index] = .failure(
                                RooftopError(.cache, "the local datastore could not be written", cause: error))
                        }
                    }
                },
                committed: {
                    // Before the change is published, as for a write of its own.
                    for case .success(let committed) in outcomes.list { committed() }
                })
        } catch {
            for write in writes { write.turn(.done(.failure(error))) }
            return
        }
        for (index, write) in writes.enumerated() {
            switch outcomes.list[index] {
            case .success: write.turn(.done(.success(())))
            case .failure(let error): write.turn(.done(.failure(error)))
            }
        }
    }
}
