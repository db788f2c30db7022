import Logging
import RooftopShared
import Synchronization

/// Continuous sync of some datastores over a ``LiveChannel``: a `changed` signal pulls the
/// datastore (a burst of signals while a pull runs makes one more pull, not one per signal);
/// `connected` resumes the offline queue and pulls everything (changes may have been missed
/// while disconnected). Pull failures are recorded in the datastores' status and retried with
/// backoff a few times; the next signal tries again.
actor ContinuousSync {
    private weak var engine: SyncEngine?
    let channel: any LiveChannel
    let datastores: [DatastoreID]
    let scope: SyncScope?
    private var running: Set<DatastoreID> = []
    private var again: Set<DatastoreID> = []
    private var listener: Task<Void, Never>?
    private var pulls: [DatastoreID: Task<Void, Never>] = [:]
    /// Set by ``stop()``: a start after it does nothing.
    private var stopped = false

    /// Passing failures of a page request retried in a row before waiting for the next signal.
    static let pullRetries = 3

    init(engine: SyncEngine, channel: any LiveChannel, datastores: [DatastoreID], scope: SyncScope?) {
        self.engine = engine
        self.channel = channel
        self.datastores = datastores
        self.scope = scope
    }

    /// Whether no pull is running or due.
    var isIdle: Bool { running.isEmpty && again.isEmpty }

    /// Starts listening, subscribes, and pulls every datastore once.
    func start() async {
        guard !stopped else { return }
        let signals = channel.signals()
        listener = Task { [weak self] in
            for await signal in signals {
                guard let self else { return }
                await self.handle(signal)
            }
        }
        await channel.subscribe(to: datastores)
        for datastore in datastores { requestPull(datastore) }
    }

    /// Stops listening and pulling, and closes the channel: the datastores are no longer
    /// subscribed.
    func stop() async {
        stopped = true
        // Before anything is awaited: a sync started after this one (``SyncEngine`` stops the
        // previous one first) must not have its flags cleared by this one's late end.
        if let activity = engine?.dependencies.activity { markSubscribed(false, datastores, in: activity) }
        listener?.cancel()
        listener = nil
        for task in pulls.values { task.cancel() }
        pulls = [:]
        await channel.close()
    }

    private func handle(_ signal: LiveSignal) {
        // Signals still buffered when the listener was cancelled: this sync is over.
        guard !stopped, let engine else { return }
        let activity = engine.dependencies.activity
        switch signal {
        case .connected:
            activity.setConnected(true)
            let outbox = engine.outbox
            Task { await outbox.resume() }
            for datastore in datastores { requestPull(datastore) }
        case .disconnected:
            activity.setConnected(false)
            markSubscribed(false, datastores, in: activity)
        case .subscribed(let confirmed):
            // Changes committed after the first pulls read the feed but before the server
            // registered the subscription were told to no one: one more pull catches them.
            markSubscribed(true, datastores.filter(confirmed.contains), in: activity)
            for datastore in datastores { requestPull(datastore) }
        case .changed(let datastore, _):
            guard datastores.contains(datastore) else { return }
            activity.update(datastore) { $0.incoming = true }
            requestPull(datastore)
        case .error(let error):
            for datastore in datastores { activity.update(datastore) { $0.lastError = error } }
        }
    }

    /// Records whether continuous sync follows these datastores (``DatastoreStatus/subscribed``).
    private func markSubscribed(_ subscribed: Bool, _ datastores: [DatastoreID], in activity: DatastoreActivity) {
        for datastore in datastores { activity.update(datastore) { $0.subscribed = subscribed } }
    }

    /// Pulls a datastore, or, when a pull of it runs, makes sure one more follows.
    private func requestPull(_ datastore: DatastoreID) {
        guard !stopped else { return }
        guard !running.contains(datastore) else {
            again.insert(datastore)
            return
        }
        running.insert(datastore)
        pulls[datastore] = Task { await self.pullLoop(datastore) }
    }

    private func pullLoop(_ datastore: DatastoreID) async {
        repeat {
            again.remove(datastore)
            guard let engine, !Task.isCancelled else { break }
            do {
                _ = try await engine.pull(
                    datastore: datastore, scope: scope, maxRetries: ContinuousSync.pullRetries, progress: nil,
                    onChange: nil)
            } catch {
                // The datastore's status carries the error (`lastError`); the next notification,
                // reconnection or poll pulls again.
                SyncEngine.logger.notice(
                    "continuous pull failed", metadata: ["datastore": "\(datastore)", "error": "\(error)"])
            }
        } while again.contains(datastore) && !Task.isCancelled
        running.remove(datastore)
        pulls[datastore] = nil
    }
}

extension SyncEngine {
    /// How often continuous sync polls when no live connection is available.
    static let pollingInterval = Duration.seconds(30)

    /// Keeps datastores in sync until ``stop()``: pulls them now and whenever the
    /// server announces a change, and resumes the offline queue whenever the connection comes
    /// back. Starting again replaces the previous set.
    ///
    /// The server's live WebSocket announces changes; a client without one (over a custom
    /// transport) polls every 30 seconds on the configured clock instead. While the
    /// connection is down it reconnects with backoff, and pulls everything when it is back.
    /// - Parameters:
    ///   - datastores: The datastores to keep in sync.
    ///   - scope: What to keep of each (default `nil`: each datastore's previous scope, or everything).
    /// - Throws: `closed` after shutdown; `illegalArgument` when the configured trust cannot
    ///   be used for the live connection.
    public func startContinuous(datastores: [DatastoreID], scope: SyncScope? = nil) async throws {
        _ = try liveDependencies()
        let channel = try liveChannel?() ?? PollingChannel(interval: SyncEngine.pollingInterval, clock: clock)
        await startContinuous(datastores: datastores, scope: scope, channel: channel)
    }

    /// Continuous sync over a given channel; nothing (the channel closed) once the engine is
    /// closed, even when it closes meanwhile.
    func startContinuous(datastores: [DatastoreID], scope: SyncScope?, channel: any LiveChannel) async {
        let sync = ContinuousSync(engine: self, channel: channel, datastores: datastores, scope: scope)
        let (installed, previous) = continuous.withLock { current -> (Bool, ContinuousSync?) in
            // Read under this lock, which ``close()`` sets the flag under.
            guard !isClosed else { return (false, nil) }
            defer { current = sync }
            return (true, current)
        }
        await previous?.stop()
        guard installed else {
            await sync.stop()
            return
        }
        // A close from here on stops `sync` (it was installed), before or after it starts.
        await sync.start()
    }

    /// Stops continuous sync (pulls running are cancelled; the offline queue keeps sending).
    public func stop() async {
        let current = continuous.withLock { current in
            defer { current = nil }
            return current
        }
        await current?.stop()
    }
}
