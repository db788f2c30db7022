import Logging
import Synchronization
import RooftopShared

extension SyncEngine {
    /// What a pull tells its caller about each change applied (``Datastore/sync()`` collects them).
    typealias ChangeObserver = @Sendable (_ key: ObjectKey, _ deleted: Bool) -> Void

    /// A pull, with the options continuous sync and ``Datastore/sync()`` use.
    /// - Parameters:
    ///   - maxRetries: Passing failures of a page request retried in a row, with backoff.
    ///   - onChange: Told of every object a change touched.
    func pull(
        datastore: DatastoreID, scope requested: SyncScope?, maxRetries: Int,
        progress: (@Sendable (SyncProgress) -> Void)?, onChange: ChangeObserver?
    ) async throws(RooftopError) -> Int {
        let dependencies = try liveDependencies()
        let activity = dependencies.activity
        activity.update(datastore) { $0.pulls += 1 }
        defer { activity.update(datastore) { $0.pulls -= 1 } }
        let reporter = ProgressReporter(phase: .pull, datastore: datastore, callback: progress, broadcaster: progressReports)
        do {
            let count = try await pullInScope(
                datastore, requested: requested, maxRetries: maxRetries, reporter: reporter,
                onChange: onChange)
            activity.update(datastore) { entry in
                entry.incoming = false
                entry.needsReset = false
                entry.lastError = nil
            }
            reporter.finish()
            return count
        } catch {
            // A pull stopped on purpose (continuous sync stopped, the client shut down) is no
            // failure of the datastore's to show: a cancelled request is never one, whether the
            // cancellation reached this task or only the request's.
            if error.code != .cancelled {
                activity.update(datastore) { $0.lastError = error }
            }
            reporter.fail(error)
            throw error
        }
    }

    /// Works out what the stored checkpoint covers against the scope asked for: narrows locally,
    /// catches up on what widening added, then pulls from the checkpoint.
    private func pullInScope(
        _ datastore: DatastoreID, requested: SyncScope?, maxRetries: Int,
        reporter: ProgressReporter, onChange: ChangeObserver?
    ) async throws(RooftopError) -> Int {
        let owner = dependencies.scope
        let checkpoint = try dependencies.store.checkpoint(scope: owner, datastore: datastore)
        let stored = try dependencies.store.syncFilter(scope: owner, datastore: datastore)
        let scope = requested ?? stored ?? .everything
        var since = checkpoint
        if since != nil, let stored {
            let transition = scope.transition(from: stored)
            if transition.narrows { try narrow(datastore, to: scope) }
            switch transition.catchUp {
            case .nothing:
                break
            case .classes(let names):
                let caught = try await drive(
                    datastore, since: nil, classes: names.sorted(), scope: scope, storeCheckpoint: false,
                    maxRetries: maxRetries, reporter: reporter, onChange: onChange)
                reporter.endPart(processed: caught)
            case .everything:
                since = nil
            }
        } else if since != nil {
            // A checkpoint whose scope is unknown (kept from before an account): start over.
            since = nil
        }
        let pulled = try await drive(
            datastore, since: since, classes: scope.pullClasses, scope: scope, storeCheckpoint: true,
            maxRetries: maxRetries, reporter: reporter, onChange: onChange)
        return reporter.offset + pulled
    }

    /// Runs the state machine over the network and the store, one page in hand at a time; the
    /// next page is already being fetched while a page is read and applied (its request needs
    /// only the page's checkpoint, read first: ``RemoteAPI/ReceivedPage``), and is used only if
    /// the machine asks for exactly that checkpoint.
    private func drive(
        _ datastore: DatastoreID, since: Checkpoint?, classes: [String]?, scope: SyncScope, storeCheckpoint: Bool, maxRetries: Int, reporter: ProgressReporter, onChange: ChangeObserver?
    ) async throws(RooftopError) -> Int {
        var machine = SyncStateMachine(maxRetries: maxRetries)
        var actions = machine.handle(.start(checkpoint: since))
        // Whose pull this is: roles a page tells are that user's.
        let pullScope = dependencies.scope
        var page: RemoteAPI.ReadPage?
        let activity = dependencies.activity
        let api = dependencies.api
        let fetch = { @Sendable (since: Checkpoint?) async -> Result<RemoteAPI.ReceivedPage, RooftopError> in
            do throws(RooftopError) {
                return .success(try await api.receivePage(PullRequest(datastore: datastore, since: since, classes: classes)))
            } catch {
                return .failure(error)
            }
        }
        var ahead: (since: Checkpoint, task: Task<Result<RemoteAPI.ReceivedPage, RooftopError>, Never>)?
        defer { ahead?.task.cancel() }
        // After `startOver`: the keys the pull from the beginning sent, to find what it did not.
        var seen: Seen?
        var observer = onChange
        // Pages received but not yet written: consecutive pages share one transaction (see
        // ``PageBatch``), written while the next pages are fetched and read. `writes`: the batches
        // handed to the writer, written one at a time, in order, each only after the one before
        // was (a batch after one that was not must not be: its checkpoint would skip it); at most
        // ``batchesAhead``, so that the pull goes on fetching while one is written and the next
        // waits, and holds a bounded number of pages. Whatever happens next (a retry, a restart,
        // a failure) writes them first; the last write is awaited before the pull finishes.
        var batch = PageBatch()
        // The fields each class of the pull keeps rows of, read once per class: a class's
        // declarations are given to the store at its first page (the writer checks them again,
        // ``PreparedObject/rows(covering:)``).
        var keptFields: [String: Set<String>?] = [:]
        var writes: [Task<Result<Void, RooftopError>, Never>] = []
        // An initial sync of many changes, when the app chose it (``ClientConfiguration/bulkInitialSync``),
        // loads the datastore in bulk: the declared indexes' entries of what it stores are built
        // in sorted passes (``LocalStore/BulkLoading``), one after a batch's write once enough
        // objects wait for theirs, the last when the pull ends.
        let store = dependencies.store
        // One an interrupted pull began goes on here: passes as the batches are written.
        var bulk = try store.read { db in try LocalStore.bulkBound(scope: pullScope, datastore: datastore, db) } != nil
        func finishOldestWrite() async throws(RooftopError) {
            // On failure the pull fails and starts again from the last checkpoint written; the
            // writes after it end without writing.
            if case .failure(let error) = await writes.removeFirst().value { throw error }
        }
        func flush(wait: Bool) async throws(RooftopError) {
            if let merged = await batch.take() {
                while writes.count >= SyncEngine.batchesAhead { try await finishOldestWrite() }
                let stored = storeCheckpoint ? merged.checkpoint : nil
                let previous = writes.last
                writes.append(Task { [observer, bulk] () async -> Result<Void, RooftopError> in
                    if let previous, case .failure(let error) = await previous.value { return .failure(error) }
                    do throws(RooftopError) {
                        try await self.apply(
                            merged.page, prepared: merged.prepared, datastore: datastore, scope: scope,
                            checkpoint: stored, owner: pullScope, onChange: observer)
                        if bulk { try await store.buildBulkEntries(scope: pullScope, datastore: datastore, finishing: false) }
                        return .success(())
                    } catch {
                        return .failure(error)
                    }
                })
            }
            if wait { while !writes.isEmpty { try await finishOldestWrite() } }
        }
        while !actions.isEmpty {
            let action = actions.removeFirst()
            switch action {
            case .retryLater, .startOver:
                // Written before waiting or restarting: nothing received is lost.
                try await flush(wait: true)
            case .fail(let failure):
                // Written before failing too; the pull's own failure is what its caller hears.
                do {
                    try await flush(wait: true)
                } catch {
                    SyncEngine.logger.warning(
                        "pulled changes could not be written before the pull failed; they are pulled again",
                        metadata: ["failure": "\(failure)", "error": "\(error)"])
                }
            case .purgeDatastore:
                // The datastore is gone: what was received of it is too (a write under way ends
                // first, so that it cannot bring objects back after the purge).
                batch = PageBatch()
                // Their outcomes no longer matter: everything of the datastore goes.
                for write in writes { _ = await write.value }
                writes = []
            default:
                break
            }
            switch action {
            case .requestPage(let since):
                // A cancelled pull asks for no more pages: the page fetched ahead is a task of its
                // own, which the pull's cancellation does not reach, and each page received would
                // ask for the next. What was received is written first, with its checkpoint.
                if Task.isCancelled {
                    try await flush(wait: true)
                    throw RooftopError(.cancelled, "the pull was cancelled")
                }
                let received: Result<RemoteAPI.ReceivedPage, RooftopError>
                if let prefetched = ahead, prefetched.since == since {
                    received = await prefetched.task.value
                } else {
                    ahead?.task.cancel()
                    received = await fetch(since)
                }
                ahead = nil
                let result = received.flatMap { received in
                    // The next page is asked for as soon as this one is here, while it is read,
                    // applied and written (the server works on it meanwhile).
                    if let next = received.next { ahead = (next, Task { await fetch(next) }) }
                    return Result { () throws(RooftopError) in try received.read() }
                }
                switch result {
                case .success(let response):
                    activity.setConnected(true)
                    page = response
                    actions += machine.handle(.received(SyncStateMachine.Page(response.response)))
                case .failure(let error):
                    if error.isConnectivity { activity.setConnected(false) }
                    actions += machine.handle(.requestFailed(error))
                }
            case .applyPage(let checkpoint):
                guard let read = page else { continue }
                page = nil
                let current = read.response
                do {
                    // Roles first: the objects the page brings are checked offline with them.
                    if let roles = current.roles { try dependencies.account.updateRoles(roles, scope: pullScope) }
                    // The indexes of the page's classes before its objects are written: they are
                    // built from what is stored, then kept by every write.
                    let classNames = Set(current.changes.map(\.className))
                    try await self.classes.declareIndexes(of: classNames, api: api, store: dependencies.store)
                    // Its objects are prepared for writing from now on, beside the next page's
                    // fetch and the batch before's write
                    // (``SyncEngine/prepare(_:objectTexts:valueIndexed:)``): the rows of the
                    // fields the store keeps.
                    let unknown = classNames.subtracting(keptFields.keys)
                    if !unknown.isEmpty { keptFields.merge(try dependencies.store.valueIndexedFields(of: unknown)) { $1 } }
                    let valueIndexed = keptFields
                    batch.add(
                        current,
                        prepared: Task {
                            SyncEngine.prepare(current, objectTexts: read.objectTexts, valueIndexed: valueIndexed)
                        },
                        checkpoint: checkpoint)
                    if !current.hasMore {
                        try await flush(wait: true)
                    } else if batch.isFull {
                        try await flush(wait: false)
                    }
                    actions += machine.handle(.applied)
                } catch {
                    actions += machine.handle(.applyFailed(error))
                }
            case .reportProgress(let processed, let total):
                reporter.report(processed: processed, total: total)
                // From no checkpoint, into a datastore holding (nearly) nothing: a first sync.
                if storeCheckpoint, since == nil, !bulk, let ahead = total.map({ $0.subtractingReportingOverflow(processed) }),
                    !ahead.overflow, store.bulkLoading.withLock({ $0.enabled && ahead.partialValue >= $0.thresholds.threshold })
                {
                    bulk = try await store.beginBulkLoad(scope: pullScope, datastore: datastore)
                }
            case .purgeDatastore:
                try purge(datastore)
            case .startOver:
                let keys = Seen()
                seen = keys
                observer = { key, deleted in
                    keys.insert(key)
                    onChange?(key, deleted)
                }
            case .retryLater(let attempt):
                let delay = dependencies.configuration.retry.delay(beforeAttempt: attempt, random: dependencies.random())
                do {
                    try await clock.sleepUntilMillis(clock.nowMillis() + EngineClock.milliseconds(delay))
                } catch {
                    throw RooftopError(.cancelled, "the pull was cancelled")
                }
                actions += machine.handle(.retryTimerFired)
            case .finish(let processed):
                if let seen { try dropUnseen(datastore, classes: classes, seen: seen.keys) }
                // A bulk load ends with the pull that caught up (one an interrupted pull began too).
                if storeCheckpoint, bulk {
                    try await store.buildBulkEntries(scope: pullScope, datastore: datastore, finishing: true)
                }
                return processed
            case .fail(let error):
                throw error
            }
        }
        throw RooftopError(.internal, "the pull ended without finishing")
    }

    /// Batches handed to the writer that a pull holds at most: one being written, one waiting.
    static let batchesAhead = 2

    /// Consecutive pull pages written together, at most ``maxChanges`` changes (small pages
    /// share one batch; the server's default page is a quarter of one), in one transaction unless
    /// another write waits (``apply(_:prepared:datastore:scope:checkpoint:owner:onChange:)``
    /// then lets it in after a slice of ``SyncEngine/sliceSize``). An initial sync's writes go to
    /// indexes far larger than one transaction touches, at random places: every page of them
    /// dirtied is written to the log once per transaction, so larger transactions write less (in
    /// raw SQLite, this layout's 100,000 objects took 11.1 s in transactions of 500, 8.0 s in
    /// transactions of 2,000). A save waiting during a sync waits for one slice, not one batch.
    ///
    /// The checkpoint stored is the last page's, with every page's changes: a pull interrupted
    /// before a batch is written resumes from the checkpoint before it. An object sent by two
    /// pages of a batch is written once, in its later state (commit order: the later page has it
    /// newer).
    struct PageBatch {
        /// Changes one transaction writes at most (past this, the batch is written).
        static let maxChanges = 2_000
        /// Pages one batch holds at most, however few changes they bring (pages of nothing but
        /// checkpoints still end a batch, and their checkpoint is stored).
        static let maxPages = 64
        private var pages: [PullResponse] = []
        /// The preparations of each page's changes, by position, under way
        /// (``SyncEngine/prepare(_:objectTexts:valueIndexed:)``).
        private var preparations: [Task<[PreparedObject?], Never>?] = []
        private var checkpoint: Checkpoint?
        private var changes = 0

        /// An object of the datastore the pull is of.
        private struct ChangeKey: Hashable {
            var className: String
            var objectId: String
        }

        /// Whether the batch should be written now.
        var isFull: Bool { changes >= Self.maxChanges || pages.count >= Self.maxPages }

        /// Adds a page received, to be stored with `checkpoint`; `prepared`: the task working out the
        /// preparations of its changes, by position
        /// (``SyncEngine/prepare(_:objectTexts:valueIndexed:)``), if any.
        mutating func add(_ page: PullResponse, prepared: Task<[PreparedObject?], Never>? = nil, checkpoint: Checkpoint) {
            pages.append(page)
            preparations.append(prepared)
            self.checkpoint = checkpoint
            changes += page.changes.count
        }

        /// Empties the batch: its pages as one page (each object once, in its last state, in
        /// order) with the preparations of its changes, by position, and the last page's
        /// checkpoint; `nil` when empty.
        mutating func take() async -> (page: PullResponse, prepared: [PreparedObject?], checkpoint: Checkpoint)? {
            let (pages, preparations, checkpoint) = (self.pages, self.preparations, self.checkpoint)
            self = PageBatch()
            guard let last = pages.last, let checkpoint else { return nil }
            // A page without preparations has `nil` for each change (worked out when written).
            var prepared: [PreparedObject?] = []
            for (page, preparation) in zip(pages, preparations) {
                let done = await preparation?.value ?? []
                prepared += done.count == page.changes.count ? done : Array(repeating: nil, count: page.changes.count)
            }
            guard pages.count > 1 else { return (last, prepared, checkpoint) }
            let all = pages.flatMap(\.changes)
            // The last change of each object is kept (found from the end).
            var later = Set<ChangeKey>()
            later.reserveCapacity(all.count)
            var kept = [Bool](repeating: false, count: all.count)
            for index in all.indices.reversed() {
                kept[index] = later.insert(ChangeKey(className: all[index].className, objectId: all[index].objectId)).inserted
            }
            var merged = last
            guard later.count < all.count else {
                merged.changes = all
                return (merged, prepared, checkpoint)
            }
            merged.changes = all.indices.filter { kept[$0] }.map { all[$0] }
            return (merged, prepared.indices.filter { kept[$0] }.map { prepared[$0] }, checkpoint)
        }
    }


    /// The keys a pull sent, collected as its pages are applied.
    final class Seen: Sendable {
        private let state = Mutex<Set<ObjectKey>>([])
        var keys: Set<ObjectKey> { state.withLock { $0 } }
        func insert(_ key: ObjectKey) { _ = state.withLock { $0.insert(key) } }
    }

    /// After a pull from the beginning: the stored copies (in the pulled classes) that it did not
    /// send again were deleted on the server with their tombstones since swept, or are out of the
    /// user's reach; they go, as a tombstone would take them. Objects with queued changes stay:
    /// the push that sends them tells what became of them.
    func dropUnseen(_ datastore: DatastoreID, classes: [String]?, seen: Set<ObjectKey>)
        throws(RooftopError)
    {
        let classes = classes.map(Set.init)
        var gone: [ObjectKey] = []
        try dependencies.store.write(scope: dependencies.scope) { transaction in
            let queued = try transaction.queuedKeys(in: datastore)
            for key in try transaction.storedKeys(in: datastore)
            where !seen.contains(key) && !queued.contains(key) && (classes?.contains(key.className) ?? true) {
                try transaction.remove(key)
                gone.append(key)
            }
        }
        for key in gone { dependencies.registry.existing(key)?.markDeleted() }
    }

    /// Drops the local copies that left the scope: their sync pin goes, so that objects still
    /// pinned under another label or with queued changes stay.
    func narrow(_ datastore: DatastoreID, to scope: SyncScope) throws(RooftopError) {
        try dependencies.store.write(scope: dependencies.scope) { transaction in
            for (key, server) in try transaction.syncedObjects(in: datastore) {
                guard let server, !scope.keeps(server) else { continue }
                try transaction.unpin(key, label: LocalStore.syncLabel)
            }
        }
    }

    /// Drops a datastore the server no longer has (or no longer shows the user): its objects,
    /// pins, checkpoint and scope. Queued changes stay: the server refuses them, and they are set
    /// aside for the app rather than lost silently.
    func purge(_ datastore: DatastoreID) throws(RooftopError) {
        try dependencies.store.write(scope: dependencies.scope) { transaction in
            try transaction.removeDatastore(datastore, discardQueued: false)
            try transaction.setSyncFilter(nil, datastore: datastore)
        }
        for object in dependencies.registry.all() where object.datastore == datastore { object.markDeleted() }
        dependencies.activity.update(datastore) { $0.needsReset = true }
    }
}
