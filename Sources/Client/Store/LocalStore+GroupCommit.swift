import GRDB
import RooftopShared
import Synchronization

/// Group commit: writes of concurrent callers that each must be durable before they return
/// (`saveEventually()`) share one transaction, and so one wait for the disk.
///
/// A caller hands its write over and waits. The first caller to find no write under way becomes
/// the leader: it takes every write handed over so far, runs them in one transaction, each in
/// its own savepoint (a write that throws is undone alone, and only its caller hears the error),
/// commits once, answers every caller, and goes on with the writes handed over meanwhile. A
/// caller alone is its own leader, in one transaction as ``LocalStore/write(scope:_:committed:)``.
extension LocalStore {
    /// One caller's write, waiting for the leader.
    struct GroupedWrite: Sendable {
        /// The write; `committed` is called after the commit when it succeeded.
        let body: @Sendable (StoreTransaction) throws -> @Sendable () -> Void
        let scope: String
        let done: @Sendable (Result<Void, RooftopError>) -> Void
    }

    /// The writes handed over and whether a leader runs them.
    struct GroupQueue: Sendable {
        var waiting: [GroupedWrite] = []
        var leading = false
    }

    /// The most writes one transaction takes: a caller waits at most for these.
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
        let result: Result<T, RooftopError> = await withCheckedContinuation { continuation in
            let value = Mutex<T?>(nil)
            let write = GroupedWrite(
                body: { transaction in
                    let result = try body(transaction)
                    value.withLock { $0 = result }
                    return { committed?(result) }
                },
                scope: scope,
                done: { outcome in
                    switch outcome {
                    case .success:
                        guard let result = value.withLock({ $0 }) else {
                            continuation.resume(returning: .failure(RooftopError(.internal, "a grouped write lost its result")))
                            return
                        }
                        continuation.resume(returning: .success(result))
                    case .failure(let error):
                        continuation.resume(returning: .failure(error))
                    }
                })
            let leads = group.withLock { queue in
                queue.waiting.append(write)
                guard !queue.leading else { return false }
                queue.leading = true
                return true
            }
            if leads { lead() }
        }
        return try result.get()
    }

    /// Runs the writes handed over, a group per transaction, until none is left.
    private func lead() {
        while true {
            let writes: [GroupedWrite] = group.withLock { queue in
                let taken = Array(queue.waiting.prefix(LocalStore.maxGroup))
                queue.waiting.removeFirst(taken.count)
                if taken.isEmpty { queue.leading = false }
                return taken
            }
            guard !writes.isEmpty else { return }
            commit(writes)
        }
    }

    /// One transaction for `writes`, each in a savepoint; then every caller is answered.
    private func commit(_ writes: [GroupedWrite]) {
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
                        do {
                            var committed: (@Sendable () -> Void)?
                            try transaction.db.inSavepoint {
                                committed = try write.body(own)
                                return .commit
                            }
                            if let committed {
                                outcomes.list[index] = .success(committed)
                                transaction.record(own.change)
                            }
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
            for write in writes { write.done(.failure(error)) }
            return
        }
        for (index, write) in writes.enumerated() {
            switch outcomes.list[index] {
            case .success: write.done(.success(()))
            case .failure(let error): write.done(.failure(error))
            }
        }
    }
}
