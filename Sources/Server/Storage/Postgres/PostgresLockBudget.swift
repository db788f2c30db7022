import Foundation
import Synchronization

/// How many advisory locks one server process's write transactions hold at once.
///
/// A write locks its object until commit (``PostgresStatements/LockWrites``): a push of 500
/// objects holds 501 locks. PostgreSQL keeps them in a shared table of
/// `max_locks_per_transaction × max_connections` entries (6,400 by default), and a transaction
/// that finds it full fails ("out of shared memory"). So a transaction takes permits for the
/// locks it is about to take, and waits (on its own thread, before it holds any, in turn) while
/// the process's budget is spent; one that already holds permits takes more without waiting,
/// so that no two transactions wait for each other here. Permits go back when the transaction
/// has ended. A waiting transaction holds its connection (as one waiting for a datastore's lock
/// did before writers ran at once).
///
/// ```swift
/// let permits = budget.permits()
/// defer { permits.release() }
/// permits.acquire(501)   // before the push's locks
/// ```
final class PostgresLockBudget: Sendable {
    /// The budget of a process (``defaultCapacity``): a third of PostgreSQL's default lock table,
    /// so that two processes and the database's own locks fit in it.
    static let defaultCapacity = 2_048

    private let capacity: Int
    private let state = Mutex(State())
    private let condition = NSCondition()

    private struct State {
        var inUse = 0
        /// Transactions holding none wait in turn: the next ticket, and the one served next.
        var nextTicket = 0
        var serving = 0
    }

    /// A budget of `capacity` locks.
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// The permits of one transaction, none held yet.
    func permits() -> Permits { Permits(budget: self) }

    /// The locks held now (for tests).
    var inUse: Int { state.withLock { $0.inUse } }

    /// The transactions waiting for their turn (for tests).
    var waiting: Int { state.withLock { $0.nextTicket &- $0.serving } }

    /// Takes `count` permits: when `holding` is zero, waits for its turn (first come, first
    /// served, so a large transaction is not passed over) and until they fit (at most the whole
    /// budget is asked for, so a large transaction runs alone); takes them at once otherwise.
    fileprivate func take(_ count: Int, holding: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        guard holding == 0 else {
            state.withLock { $0.inUse += count }
            return count
        }
        let count = min(count, capacity)
        let ticket = state.withLock { state in
            defer { state.nextTicket &+= 1 }
            return state.nextTicket
        }
        while !state.withLock({ $0.serving == ticket && ($0.inUse == 0 || $0.inUse + count <= capacity) }) {
            condition.wait()
        }
        state.withLock { state in
            state.inUse += count
            state.serving &+= 1
        }
        condition.broadcast()
        return count
    }

    fileprivate func give(_ count: Int) {
        guard count > 0 else { return }
        condition.lock()
        state.withLock { $0.inUse -= count }
        condition.broadcast()
        condition.unlock()
    }

    /// One transaction's permits, used by the one thread running it, released once by its caller.
    final class Permits: Sendable {
        private let budget: PostgresLockBudget
        private let held = Mutex(0)

        fileprivate init(budget: PostgresLockBudget) { self.budget = budget }

        /// Takes permits for `count` more locks (see ``PostgresLockBudget``).
        func acquire(_ count: Int) {
            guard count > 0 else { return }
            let holding = held.withLock { $0 }
            let taken = budget.take(count, holding: holding)
            held.withLock { $0 += taken }
        }

        /// Gives every permit back.
        func release() {
            let count = held.withLock { value in
                defer { value = 0 }
                return value
            }
            budget.give(count)
        }
    }
}
