import Foundation

/// Commits published in commit order. A write's publication (its `committed` callback, through
/// which live objects take what it stored, then its change on ``LocalStore/changes``) runs after
/// its commit, outside the writer: two writes committed one after the other could publish the
/// other way round, and a live object keep the older state (an outbox answer's after a pull's
/// newer one). Each commit takes a ticket inside its transaction, where writes are one at a time,
/// so tickets follow commit order; a publication waits for the one before to finish.
///
/// Publications are short (live objects' bases replaced, changes yielded to streams) and never
/// write: a wait for the one before is brief and cannot be a cycle.
final class PublicationOrder: @unchecked Sendable {
    // `issued`, `published` and `waiters` are only read and written under `condition`'s lock.
    private let condition = NSCondition()
    private var issued = 0
    private var published = 0
    /// Tasks waiting for every commit issued before they asked to be published, each with the
    /// count of publications it waits for.
    private var waiters: [(through: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// The next ticket; taken inside the write transaction, just before its commit.
    func issue() -> Int {
        condition.lock()
        defer { condition.unlock() }
        issued += 1
        return issued - 1
    }

    /// Waits until every commit before `ticket` was published.
    func waitTurn(_ ticket: Int) {
        condition.lock()
        defer { condition.unlock() }
        while published < ticket { condition.wait() }
    }

    /// Ends `ticket`'s publication (once its turn came: a failed commit's too).
    func finish(_ ticket: Int) {
        condition.lock()
        while published < ticket { condition.wait() }
        published = ticket + 1
        condition.broadcast()
        let done = waiters.filter { $0.through <= published }
        waiters.removeAll { $0.through <= published }
        condition.unlock()
        for waiter in done { waiter.continuation.resume() }
    }

    /// Returns once every commit made before the call is published (commits made meanwhile are
    /// not waited for). Bounded: every ticket is finished, a failed commit's too.
    func waitForPublications() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            guard published < issued else {
                condition.unlock()
                return continuation.resume()
            }
            waiters.append((issued, continuation))
            condition.unlock()
        }
    }

    /// How many tasks wait in ``waitForPublications()`` (for tests).
    var waiterCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiters.count
    }

    /// Whether a commit made is not published yet: a reader that saw it committed may find live
    /// objects that have not taken it yet.
    var isPublishing: Bool {
        condition.lock()
        defer { condition.unlock() }
        return published < issued
    }
}
