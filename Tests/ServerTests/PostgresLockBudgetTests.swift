import Dispatch
import Testing
import RooftopTestSupport

@testable import RooftopServer

/// A server process's write transactions hold at most its budget of advisory locks at once
/// (``PostgresLockBudget``): one that holds none waits while the budget is spent, one that holds
/// some takes more at once (so none waits for another here), and everything is given back.
@Suite("PostgreSQL: the lock budget")
struct PostgresLockBudgetTests {
    @Test("a transaction waits while the budget is spent, runs once permits come back; a holder takes more at once")
    func waitsForRoom() async throws {
        let budget = PostgresLockBudget(capacity: 10)
        let first = budget.permits()
        first.acquire(8)
        first.acquire(5)
        #expect(budget.inUse == 13, "a holder is not made to wait: it may be what others wait for")

        let second = budget.permits()
        let took = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            second.acquire(4)
            took.signal()
        }
        #expect(took.wait(timeout: .now() + .milliseconds(200)) == .timedOut, "no room for 4 more")
        first.release()
        #expect(took.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(budget.inUse == 4)

        // More than the whole budget: capped, so it runs alone instead of never.
        second.release()
        let large = budget.permits()
        large.acquire(50)
        #expect(budget.inUse == 10)
        large.release()
        large.release()
        #expect(budget.inUse == 0, "released once")
    }

    @Test("transactions holding none are served in turn: a small one waits behind a large one that came first")
    func firstComeFirstServed() async throws {
        let budget = PostgresLockBudget(capacity: 10)
        let holder = budget.permits()
        holder.acquire(5)
        let (large, small) = (budget.permits(), budget.permits())
        let (tookLarge, tookSmall) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        DispatchQueue.global().async {
            large.acquire(8)
            tookLarge.signal()
        }
        let deadline = ContinuousClock.now + TestWait.patience
        while budget.waiting < 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(budget.waiting == 1, "the large one waits: 5 + 8 do not fit")
        DispatchQueue.global().async {
            small.acquire(2)
            tookSmall.signal()
        }
        while budget.waiting < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(budget.waiting == 2, "2 fit, but the small one came second: it waits too")
        holder.release()
        #expect(tookLarge.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(tookSmall.wait(timeout: .now() + .seconds(60)) == .success)
        #expect(budget.inUse == 10)
        large.release()
        small.release()
        #expect(budget.inUse == 0)
    }
}
