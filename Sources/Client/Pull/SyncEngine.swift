import Logging
import RooftopShared
import Synchronization

/// Push and pull (`client.sync`): sends the offline queue, pulls datastores page by page with
/// progress, rebases unsent changes over pulled ones, and keeps datastores in sync continuously.
///
/// ```swift
/// try await client.sync.push()
/// let changes = try await client.sync.pull(datastore: .default) { progress in
///     print("\(progress.processed) of \(progress.total ?? 0)")
/// }
/// try await client.sync.startContinuous(datastores: [.default])
/// ```
///
/// Pulls need a signed-in user for private and shareable datastores (`:app` may be pulled
/// anonymously when the app's class permissions allow it).
public final class SyncEngine: Sendable {
    /// The store, the API and the rest the engine works with.
    let dependencies: EngineDependencies
    /// The offline queue's engine, which pushes send through.
    let outbox: OutboxEngine
    /// Makes continuous sync's live connections (`nil`: continuous sync polls).
    let liveChannel: (@Sendable () throws(RooftopError) -> any LiveChannel)?
    /// Set by ``close()``: the engine's operations throw `closed`.
    private let closed = Mutex(false)
    /// Where sync notes what it worked around (a rebase left to the server, for one).
    static let logger = Logger(label: "rooftop.sync")
    /// Class settings fetched from the server: merge rules for rebases, declared indexes for the store.
    let classes = ClassSettingsCache()
    let clock: EngineClock
    let progressReports = Broadcaster<SyncProgress>()
    let continuous = Mutex<ContinuousSync?>(nil)

    /// An engine over `dependencies` that pushes through `outbox`.
    init(
        _ dependencies: EngineDependencies, outbox: OutboxEngine,
        liveChannel: (@Sendable () throws(RooftopError) -> any LiveChannel)?
    ) {
        self.dependencies = dependencies
        self.outbox = outbox
        self.liveChannel = liveChannel
        self.clock = EngineClock(dependencies.configuration.clock)
    }

    /// Every progress report of every push and pull from now on.
    public var progress: AsyncStream<SyncProgress> { progressReports.stream() }

    /// Every merge decision from now on: those the server took applying queued changes, and those
    /// the client took rebasing queued changes over pulled ones.
    public var mergeDecisions: AsyncStream<MergeEvent> {
        dependencies.merges.stream()
    }

    /// Bulk loads of a first sync (``ClientConfiguration/bulkInitialSync``) begun since the client
    /// opened: for tests, which check that a long randomized run did load some.
    @_spi(Testing) public var bulkLoadsBegun: Int {
        dependencies.store.bulkLoading.withLock { $0.begun }
    }

    /// What the local store's kept counts and copies say that its rows do not (empty when they
    /// agree): for tests, which check after a randomized run that the counts per class follow
    /// the objects and that every index entry is of a live object with its readable flag.
    /// - Throws: `cache` when the store cannot be read.
    @_spi(Testing) public func storeInconsistencies() throws(RooftopError) -> [String] {
        try dependencies.store.inconsistencies()
    }

    /// Pulls a datastore's changes since the last pull, a page at a time, each page applied with
    /// its checkpoint in one transaction (an interrupted pull resumes after the last page).
    ///
    /// Upserts set the objects' server state and recompute their local views; objects with
    /// unsent queued changes have them rebased over the remote changes (decisions on
    /// ``mergeDecisions``); tombstones and removals (access lost) purge the local copies and
    /// their pins. A datastore the server no longer has (or no longer lets the user see) is
    /// purged locally, and the pull throws `notFound`.
    ///
    /// - Parameters:
    ///   - datastore: The datastore.
    ///   - scope: What to keep in sync (default `nil`: the scope of the previous pull, or
    ///     everything). A different scope than last time fetches or drops the difference (see
    ///     `SyncScope`).
    ///   - progress: Called with each progress report (also sent on ``progress``).
    /// - Returns: The number of changes applied.
    /// - Throws: Network errors, `notFound` (purged), `auth`, `disallowed`, `cache`.
    @discardableResult
    public func pull(
        datastore: DatastoreID, scope: SyncScope? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil
    ) async throws -> Int {
        try await pull(datastore: datastore, scope: scope, maxRetries: 0, progress: progress, onChange: nil)
    }

    /// Sends the offline queue now (ignoring retry delays) and returns once every change sent
    /// was answered: acknowledged, or refused and set aside (``Outbox/rejected()``).
    /// - Parameters:
    ///   - datastore: Only this datastore's changes (default `nil`: all).
    ///   - progress: Called with each progress report: processed = changes answered.
    /// - Throws: The failure that stopped sending (`noConnection`...; the changes stay queued);
    ///   `badState` when the changes were made without an account.
    public func push(datastore: DatastoreID? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil)
        async throws
    {
        let dependencies = try liveDependencies()
        let filter: RoundFilter = datastore.map { .datastore($0) } ?? .all
        let initial = try dependencies.store.outboxHeads(scope: dependencies.scope).count(where: filter.matches)
        let reporter = ProgressReporter(phase: .push, datastore: datastore, callback: progress, broadcaster: progressReports)
        reporter.report(processed: 0, total: initial)
        do {
            try await outbox.flush(filter) { processed, left in
                reporter.report(processed: processed, total: processed + left)
            }
        } catch {
            reporter.fail(error)
            throw error
        }
        reporter.finish()
    }

    /// The engine's dependencies, or `closed` after shutdown.
    func liveDependencies() throws(RooftopError) -> EngineDependencies {
        guard !closed.withLock({ $0 }) else { throw RooftopError(.closed, "the client was shut down") }
        return dependencies
    }

    /// Whether ``close()`` was called.
    var isClosed: Bool { closed.withLock { $0 } }

    /// Stops continuous sync for good: the engine's operations throw `closed` from now on. The
    /// flag is set under the lock continuous sync is installed under, so that a start racing
    /// with this either is stopped here or sees the flag and stops itself.
    func close() async {
        let current = continuous.withLock { current in
            closed.withLock { $0 = true }
            defer { current = nil }
            return current
        }
        await current?.stop()
    }
}

/// Sends progress reports to a callback and to the broadcast stream, offsetting the counts of
/// a run made of several parts (a catch-up pull, then the regular one).
final class ProgressReporter: Sendable {
    let phase: SyncProgress.Phase
    let datastore: DatastoreID?
    private let callback: (@Sendable (SyncProgress) -> Void)?
    private let broadcaster: Broadcaster<SyncProgress>
    private struct State {
        var offset = 0
        var last: SyncProgress?
    }
    private let state = Mutex(State())

    init(
        phase: SyncProgress.Phase, datastore: DatastoreID?, callback: (@Sendable (SyncProgress) -> Void)?,
        broadcaster: Broadcaster<SyncProgress>
    ) {
        self.phase = phase
        self.datastore = datastore
        self.callback = callback
        self.broadcaster = broadcaster
    }

    /// Changes done by the parts finished so far.
    var offset: Int { state.withLock { $0.offset } }

    /// Ends a part that did `processed` changes: later reports count from there.
    func endPart(processed: Int) { state.withLock { $0.offset += processed } }

    /// Reports the current part's counts.
    func report(processed: Int, total: Int?) {
        let offset = self.offset
        emit(SyncProgress(phase: phase, datastore: datastore, processed: offset + processed, total: total.map { offset + $0 }))
    }

    /// The final report of a run that succeeded.
    func finish() {
        let done = state.withLock { $0.last?.processed ?? $0.offset }
        emit(SyncProgress(phase: phase, datastore: datastore, processed: done, total: done, isFinished: true))
    }

    /// The final report of a run that failed.
    func fail(_ error: RooftopError) {
        let last = state.withLock { $0.last }
        emit(SyncProgress(
            phase: phase, datastore: datastore, processed: last?.processed ?? offset, total: last?.total,
            isFinished: true, error: error))
    }

    private func emit(_ progress: SyncProgress) {
        state.withLock { $0.last = progress }
        callback?(progress)
        broadcaster.publish(progress)
    }
}
