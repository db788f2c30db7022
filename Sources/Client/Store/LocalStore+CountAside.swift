import Dispatch
import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared
import Synchronization

/// A page's total counted beside the page: two reads of one snapshot at once.
///
/// A local `find` with a limit reads its page and, when the page is full, counts every match for
/// the result's `totalCount`. At a million objects a range of 10,000 matches spends more on its
/// count (reading 10,000 index entries) than on its page of 50. The count does not need the
/// page, so it runs on another reader connection while the page is read
/// (``SQLQueryRunner/countAside``): the query takes about the longer of the two instead of their
/// sum on a device with two cores or more.
///
/// Both reads must see one snapshot, or the count could disagree with the page. SQLite's own
/// way to share one (`sqlite3_snapshot_open`) is not in every build of it (not in Debian's), so
/// the store counts its commits instead (``CommitCounter``): every commit passes through the one
/// writer of ``LocalStore/write(scope:durability:long:_:committed:)``, which counts it as begun
/// just before SQLite makes it visible and as finished once it is. A read whose snapshot was
/// taken while no commit was being made, and while the count of begun commits stayed the same,
/// holds exactly that many commits (``LocalStore/versionedRead(_:)``). The count beside the page
/// is taken only when its read holds the same number as the page's; otherwise (a commit came
/// between the two) the page's read counts after the page, as it always did.
///
/// The page's read waits for the other only once that one has a connection of its own (it then
/// runs one statement and returns): with every reader connection taken by pages waiting for
/// counts, a count that has not begun is given up and counted in the page's read, so that
/// pages never wait for one another. Counts run on threads of the store's own
/// (``CountThreads``: one fewer than the device's cores, at most two, none on one core), parked
/// between counts; while all of them count, a page counts in its own read. A thread taken from
/// the system's shared pool instead started too late: it shares its few threads with Swift's
/// tasks, one of which the page's read holds.
///
/// The commits counted are the store's own: its file is written through it alone, as its
/// publication of changes and its live objects already assume.
extension LocalStore {
    /// How many counts may run beside pages at once: one fewer than the device's cores, at most
    /// two (a page and its count hold two of the pool's five reader connections).
    static let maxCountsAside = max(0, min(2, ProcessInfo.processInfo.activeProcessorCount - 1))

    /// Runs a read as ``read(_:)`` does and gives `body` the number of commits its snapshot
    /// holds, when that is known: when no commit was being made from before the read began until
    /// its snapshot was taken (`nil` otherwise).
    /// - Throws: As ``read(_:)``.
    func versionedRead<T>(_ body: (Database, _ version: Int?) throws -> T) throws(RooftopError) -> T {
        let before = commits.settled
        return try read { db in
            // The read's snapshot is taken by its first statement, if it was not taken already:
            // either way after `before` was read, and before the begun commits are read again.
            _ = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA schema_version"))
            let version = before.flatMap { commits.begun == $0 ? $0 : nil }
            return try body(db, version)
        }
    }

    /// Starts counting `fragment` (a compiled `SELECT count(*)`) on another reader connection, in
    /// a snapshot that must hold `version` commits; gives what ``SQLQueryRunner/countAside``'s
    /// closure returns: the count's end, or `nil` when every thread of ``countThreads`` counts
    /// already. Only for a store that counts aside (``countsAside``).
    func countAside(_ fragment: SQLFragment, version: Int) -> ((_ needed: Bool) -> Int?)? {
        guard let aside = startCount(fragment, version: version) else { return nil }
        return { [self] needed in
            let count = aside.take(needed: needed, patient: countsAsidePatiently.load(ordering: .relaxed))
            if count != nil { countedAside.add(1, ordering: .relaxed) }
            return count
        }
    }

    /// Starts the count of ``countAside(_:version:)`` on an idle thread of ``countThreads``;
    /// `nil` when none is idle.
    func startCount(_ fragment: SQLFragment, version: Int) -> AsideCount? {
        let aside = AsideCount()
        let started = countThreads.run { [self] in
            // Given up before this thread took it: no read at all.
            guard !aside.isGivenUp else { return { aside.finish(nil) } }
            let counted: Int?
            do {
                counted = try versionedRead { db, seen -> Int? in
                    // Given up while this waited for a connection; or another snapshot.
                    guard aside.begin(), seen == version else { return nil }
                    return try Int.fetchOne(
                        queryStatements.statement(fragment.sql, db), arguments: RooftopSQLite.arguments(fragment.arguments)
                    ) ?? 0
                }
            } catch {
                // Not lost: the page's read counts in its own transaction then, and throws what
                // the store throws there.
                counted = nil
            }
            return { aside.finish(counted) }
        }
        return started ? aside : nil
    }
}

/// The threads a store counts beside pages on (``LocalStore/countAside(_:version:)``): at most
/// `size`, each made when first needed and parked between counts, ended by ``stop()``. A job is
/// run only by a thread that is idle when it is given (never queued); the thread is idle again
/// before the job's completion runs, so that whoever waits for that completion finds it idle.
final class CountThreads: Sendable {
    private final class Worker: Sendable {
        let wake = DispatchSemaphore(value: 0)
        /// The job to run; `nil` when woken to end.
        let job = Mutex<(@Sendable () -> @Sendable () -> Void)?>(nil)
    }
    private struct Pool {
        var idle: [Worker] = []
        var made = 0
        var stopped = false
    }
    private let pool = Mutex(Pool())
    /// The most threads.
    let size: Int

    init(size: Int) { self.size = max(size, 0) }

    /// Runs `job` on an idle thread (made if fewer than ``size`` are), then, once the thread is
    /// idle again, what `job` returned. `false` when every thread is busy, or after ``stop()``.
    func run(_ job: @escaping @Sendable () -> @Sendable () -> Void) -> Bool {
        enum Taken { case idle(Worker), make, none }
        let taken = pool.withLock { pool -> Taken in
            guard !pool.stopped else { return .none }
            if let worker = pool.idle.popLast() { return .idle(worker) }
            guard pool.made < size else { return .none }
            pool.made += 1
            return .make
        }
        let worker: Worker
        switch taken {
        case .none: return false
        case .idle(let idle): worker = idle
        case .make:
            worker = Worker()
            let thread = Thread { [self] in loop(worker) }
            thread.name = "rooftop.count-aside"
            thread.stackSize = 1 << 20
            thread.start()
        }
        worker.job.withLock { $0 = job }
        worker.wake.signal()
        return true
    }

    /// How many threads run a job now.
    var busy: Int { pool.withLock { $0.made - $0.idle.count } }

    /// Ends every thread once its job is done; later jobs are refused.
    func stop() {
        let idle = pool.withLock { pool -> [Worker] in
            pool.stopped = true
            defer { pool.idle = [] }
            return pool.idle
        }
        // Busy threads see `stopped` when they finish.
        for worker in idle { worker.wake.signal() }
    }

    private func loop(_ worker: Worker) {
        while true {
            worker.wake.wait()
            guard let job = worker.job.withLock({ job in defer { job = nil }; return job }) else { return }
            let completion = job()
            let stopped = pool.withLock { pool in
                if !pool.stopped { pool.idle.append(worker) }
                return pool.stopped
            }
            completion()
            if stopped { return }
        }
    }
}

/// The store's commits, counted as the one writer makes them (``LocalStore/write(scope:durability:long:_:committed:)``):
/// begun just before SQLite makes one visible to readers, finished once it returned (made or
/// failed). See ``LocalStore/versionedRead(_:)``.
final class CommitCounter: Sendable {
    private let begunCount = Atomic<Int>(0)
    private let finishedCount = Atomic<Int>(0)

    /// The writer is about to commit. Each call is followed by one ``finished()``.
    func willCommit() { begunCount.add(1, ordering: .sequentiallyConsistent) }

    /// The commit begun last returned, made or not.
    func finished() { finishedCount.add(1, ordering: .sequentiallyConsistent) }

    /// The commits begun.
    var begun: Int { begunCount.load(ordering: .sequentiallyConsistent) }

    /// The commits begun, when all of them have finished (`nil` while one is being made). Read
    /// finished first: a commit finished is one begun, so both equal means none was between.
    var settled: Int? {
        let finished = finishedCount.load(ordering: .sequentiallyConsistent)
        let begun = begunCount.load(ordering: .sequentiallyConsistent)
        return finished == begun ? begun : nil
    }
}

/// One count beside a page (``LocalStore/countAside(_:version:)``): waiting for a connection,
/// counting, done, or given up by the page's read before it began.
final class AsideCount: Sendable {
    private enum State {
        /// Not begun; `awaited`: a patient ``take(needed:patient:)`` waits for it.
        case waiting(awaited: Bool)
        case counting, done(Int?), givenUp
    }
    private let state = Mutex(State.waiting(awaited: false))
    private let done = DispatchSemaphore(value: 0)

    /// Whether the page's read gave the count up before it began.
    var isGivenUp: Bool {
        state.withLock { state in
            if case .givenUp = state { return true }
            return false
        }
    }

    /// Whether the count's read returned (tests wait for it).
    var hasFinished: Bool {
        state.withLock { state in
            if case .done = state { return true }
            return false
        }
    }

    /// The count's read has its connection: whether to count (not when given up).
    func begin() -> Bool {
        state.withLock { state in
            guard case .waiting = state else { return false }
            state = .counting
            return true
        }
    }

    /// The count's read returned (`nil`: it did not count).
    func finish(_ count: Int?) {
        let awaited = state.withLock { state in
            defer { state = .done(count) }
            switch state {
            case .counting, .waiting(awaited: true): return true
            default: return false
            }
        }
        if awaited { done.signal() }
    }

    /// The count, waiting for it while it runs (`needed`); `nil` when it had not begun (it never
    /// will now), did not count, or is not needed. `patient` (tests, ``LocalStore/countsAsidePatiently``):
    /// a count not begun is waited for too.
    func take(needed: Bool, patient: Bool = false) -> Int? {
        let current = state.withLock { state -> State in
            let current = state
            if case .waiting = state { state = needed && patient ? .waiting(awaited: true) : .givenUp }
            return current
        }
        switch current {
        case .givenUp: return nil
        case .waiting: guard needed && patient else { return nil }
        case .done(let count): return needed ? count : nil
        case .counting: guard needed else { return nil }
        }
        done.wait()
        return state.withLock { state in
            guard case .done(let count) = state else { return nil }
            return count
        }
    }
}
