import RooftopShared
import Logging
import Synchronization

/// Sends the offline queue to the server: in queue order, an object's changes together and in
/// order, exactly once (mutation IDs), with retries on the configured clock.
///
/// **Rounds.** One round is one push: the due rows (``OutboxSchedule``) are marked `sent` in the
/// store in the same transaction that picks them — before the request leaves — so that a crash
/// while sending leaves `sent` rows, which the next start sends again with the same IDs (the
/// server answers a mutation ID it has seen with its first result). The answers are applied in
/// one transaction (``settle(_:rows:scope:now:mayHold:)``).
///
/// **When.** The engine runs a round when woken: by the client's outbox signal (something was
/// queued, a user signed in), by ``Outbox/resume()`` (which also makes every pending row due at
/// once), and by its own timer, set to the earliest retry time. Only the signed-in user's rows are
/// sent: rows kept without an account (scope `""`) wait for one, and move to it at sign-in.
///
/// **Bursts.** Woken within ``linger`` of a push it sent, the engine waits out the rest of that
/// time before the next, so that the changes queued meanwhile travel together: one push, and its
/// two commits (rows marked sent; answers applied, ``settle(_:rows:scope:now:mayHold:)``), for a
/// burst of saves rather than for each save, which the saves themselves then waited behind. A change queued after a quiet
/// moment goes at once; a backlog is sent push after push without waiting.
///
/// **Failures.** A passing failure of the whole push (no connection, timeout, network, a server
/// error, `retryLater`, a cancelled request, an unreadable answer) puts the rows back to pending
/// with one more attempt and a retry time from ``RetryPolicy`` (jitter from an injectable random
/// source). `auth` leaves them pending with no retry time: the next wake (a sign-in, `resume()`,
/// a new change) tries again. Any other failure of the whole push (say, a size limit) makes the
/// engine send rows one at a time until the culprit, sent alone, is refused and set aside. A round
/// that could not read or write the store (say, its answers could not be applied) is tried again
/// after the policy's delay: `sent` rows go again with their IDs.
actor OutboxEngine {
    /// The store, the API and the rest the engine works with.
    let dependencies: EngineDependencies
    /// The client's signals that something was queued (or a user signed in).
    private let signals: AsyncStream<Void>
    /// Set by ``stop()``: no more rounds, and flushes throw `closed`.
    private var stopped = false
    /// Everything that happens to queued changes.
    nonisolated let events = OutboxEvents()
    let clock: EngineClock
    let retry: RetryPolicy
    let random: @Sendable () -> Double
    private let wake: AsyncStream<Void>.Continuation
    private let wakeSignals: AsyncStream<Void>
    private nonisolated let started = Mutex(false)
    private var tasks: [Task<Void, Never>] = []
    private var timer: Task<Void, Never>?
    private var timerDeadline: Int64?
    /// The next round treats every pending row as due (``resume()``).
    private var forceNext = false
    /// Rows go one at a time (after a whole-push refusal).
    var isolate = false
    /// When the last push was answered (real time: a wait measured in milliseconds, whatever
    /// clock the retries use).
    private var lastPush: ContinuousClock.Instant?
    /// How long after a push a new one waits for more changes to gather (tests lengthen it).
    private(set) var linger: Duration = .milliseconds(20)
    private var roundRunning = false
    /// Rounds in a row that failed on the store (``retryAfterStoreFailure(_:)``).
    private var storeFailures = 0
    private var roundWaiters: [CheckedContinuation<Void, Never>] = []

    /// An engine over `dependencies`, woken by `signals` once started.
    init(_ dependencies: EngineDependencies, signals: AsyncStream<Void>) {
        self.dependencies = dependencies
        self.signals = signals
        self.clock = EngineClock(dependencies.configuration.clock)
        self.retry = dependencies.configuration.retry
        self.random = dependencies.random
        (wakeSignals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts the engine's loop (once).
    nonisolated func start() {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return }
        Task { await self.launch() }
    }

    private func launch() {
        guard !stopped else { return }
        let signals = self.signals
        let wake = self.wake
        tasks.append(Task {
            for await _ in signals { wake.yield() }
            wake.finish()
        })
        tasks.append(Task { await self.run() })
        // The first round sends rows left `sent` by a crash.
        wake.yield()
    }

    /// Stops the loop and the timer, and ends the event streams.
    func stop() {
        stopped = true
        for task in tasks { task.cancel() }
        tasks = []
        timer?.cancel()
        timer = nil
        wake.finish()
        events.finish()
    }

    /// Makes every pending row due and runs a round now (the connection came back).
    func resume() {
        forceNext = true
        wake.yield()
    }

    /// Sets ``linger`` (for tests).
    func setLinger(_ linger: Duration) { self.linger = linger }

    /// Wakes the loop (something changed that may make rows sendable).
    nonisolated func poke() { wake.yield() }

    private func run() async {
        for await _ in wakeSignals {
            if let lastPush, ContinuousClock.now < lastPush + linger {
                do {
                    try await Task.sleep(until: lastPush + linger, clock: .continuous)
                } catch {
                    return
                }
            }
            await drain()
        }
    }

    /// Runs rounds until nothing is due, then sets the timer.
    private func drain() async {
        while !Task.isCancelled {
            let force = forceNext
            forceNext = false
            switch await exclusiveRound(force: force, filter: .all) {
            case .idle:
                schedule(nil)
                return
            case .waiting(let next):
                schedule(next)
                return
            case .sent(_, let more):
                // Due rows left behind (a backlog, rows sent one at a time) go at once; otherwise
                // the loop looks again when woken, after the linger (changes queued during the
                // push have woken it; so does this, for the rows that wait for a time).
                if more { continue }
                wake.yield()
                return
            case .failed(let error, let next):
                schedule(next ?? retryAfterStoreFailure(error))
                return
            }
        }
    }

    /// When to try again after a round failed with no retry time of its own: the store could not
    /// be read or written (the rows stay as they were: `sent` rows go again with their IDs), or the
    /// server refused the session (`auth`: the rows wait for a sign-in, `resume()` or a new change,
    /// so `nil`). A store failure is logged, and tried again after the retry policy's delay,
    /// growing with each failure in a row: a queue must not stall until something else wakes it
    /// (a closed store, the client shut down, is not tried again).
    private func retryAfterStoreFailure(_ error: RooftopError) -> Int64? {
        guard error.code != .auth, !stopped, !dependencies.store.isClosed else { return nil }
        storeFailures += 1
        // A floor: a policy of no delay would otherwise fail and log as fast as it can.
        let delay = max(retry.delay(beforeAttempt: storeFailures, random: random()), .milliseconds(100))
        SyncEngine.logger.warning(
            "the offline queue could not use the local datastore; trying again",
            metadata: ["error": "\(error)", "failures": "\(storeFailures)", "after": "\(delay)"])
        return clock.nowMillis() + EngineClock.milliseconds(delay)
    }

    /// Sets the timer for a time (epoch milliseconds), or cancels it.
    private func schedule(_ time: Int64?) {
        guard time != timerDeadline || timer == nil else { return }
        timer?.cancel()
        timer = nil
        timerDeadline = time
        // No timer outlives ``stop()`` (a round that ends after it still schedules).
        guard let time, !stopped else { return }
        let clock = self.clock
        let wake = self.wake
        timer = Task {
            do {
                try await clock.sleepUntilMillis(time)
            } catch {
                return
            }
            guard !Task.isCancelled else { return }
            timerFired(time)
            wake.yield()
        }
    }

    private func timerFired(_ time: Int64) {
        if timerDeadline == time {
            timer = nil
            timerDeadline = nil
        }
    }

    /// Sends the rows matching `filter` now, round after round, until none is left; the engine's
    /// way to let a direct save come after an object's queued changes, and to flush for
    /// ``SyncEngine/push(datastore:progress:)``.
    /// - Parameter progress: Called after each round with the rows answered so far and the rows left.
    /// - Throws: The failure of a round (the rows stay queued); `badState` when the rows belong to
    ///   local use without an account; `cancelled` when the task is cancelled.
    func flush(_ filter: RoundFilter, progress: (@Sendable (_ answered: Int, _ left: Int) -> Void)? = nil)
        async throws(RooftopError)
    {
        guard !stopped else { throw RooftopError(.closed, "the client was shut down") }
        let store = dependencies.store
        let scope = dependencies.scope
        var left = try store.outboxHeads(scope: scope).count(where: filter.matches)
        guard left > 0 else { return }
        guard !scope.isEmpty else {
            throw RooftopError(.badState, "changes queued without an account are sent once a user signs in")
        }
        let initial = left
        var idleRounds = 0
        var answeredSoFar = 0
        var processed = 0
        while left > 0 {
            if Task.isCancelled { throw RooftopError(.cancelled, "the flush was cancelled") }
            var sent = false
            switch await exclusiveRound(force: true, filter: filter) {
            case .failed(let error, _):
                // Let the loop set the timer from every waiting row, not only these.
                wake.yield()
                throw error
            case .sent(let answered, _):
                answeredSoFar += answered
                sent = true
            case .idle, .waiting:
                idleRounds += 1
                if idleRounds > 2 { throw RooftopError(.badState, "the offline queue could not send the changes") }
            }
            left = try store.outboxHeads(scope: scope).count(where: filter.matches)
            // The engine's own loop may answer some of these rows between this flush's rounds:
            // every row gone counts, or the counts would not add up to what was queued.
            let done = max(processed, answeredSoFar, initial - left)
            if sent || done != processed { progress?(done, left) }
            processed = done
        }
        // Others may be due meanwhile: let the loop look.
        wake.yield()
    }

    /// Runs one round, never two at once.
    private func exclusiveRound(force: Bool, filter: RoundFilter) async -> RoundOutcome {
        while roundRunning {
            await withCheckedContinuation { roundWaiters.append($0) }
        }
        roundRunning = true
        let outcome = await round(force: force, filter: filter)
        if case .sent = outcome { lastPush = .now }
        if case .failed = outcome {} else { storeFailures = 0 }
        roundRunning = false
        if !roundWaiters.isEmpty { roundWaiters.removeFirst().resume() }
        return outcome
    }

    /// One push: pick and mark the due rows, send them, apply the answers.
    private func round(force: Bool, filter: RoundFilter) async -> RoundOutcome {
        guard !stopped else { return .idle }
        let scope = dependencies.scope
        guard !scope.isEmpty else { return .idle }
        let now = clock.nowMillis()
        let isolate = self.isolate
        let picked: (batch: OutboxSchedule.Batch, queued: Bool)
        do {
            picked = try dependencies.store.write(scope: scope) { transaction in
                // The heads alone decide what is due; only the rows sent are read whole (a round
                // decoded the whole queue: rounds grew with it).
                let heads = try transaction.outboxHeads().filter(filter.matches)
                let batch = try OutboxSchedule.plan(heads: heads, now: now, force: force, isolate: isolate) { index in
                    try transaction.outboxRow(seq: heads[index].seq)
                }
                if !batch.rows.isEmpty { try transaction.markSent(batch.rows.map(\.mutation.mutationId)) }
                return (batch, !heads.isEmpty)
            }
        } catch {
            return .failed(error, retryAt: nil)
        }
        let batch = picked.batch
        guard !batch.rows.isEmpty else { return picked.queued ? .waiting(until: batch.nextAttemptAt) : .idle }
        for row in batch.rows { events.publish(OutboxEvent(mutationId: row.mutation.mutationId, key: row.key, kind: .sent)) }
        let datastores = Set(batch.rows.map(\.mutation.datastore))
        let response: PushResponse
        do {
            response = try await dependencies.api.push(PushRequest(mutations: batch.rows.map(\.mutation)))
        } catch {
            dependencies.activity.record(error, for: datastores)
            return failed(error, batch: batch, scope: scope, now: now)
        }
        dependencies.activity.record(nil, for: datastores)
        do {
            let answered = try settle(response, rows: batch.rows, scope: scope, now: now, mayHold: !isolate)
            if answered > 0 { self.isolate = false }
            return .sent(answered: answered, more: batch.hasMore)
        } catch {
            // The answers could not be stored: the rows stay `sent` and go again, same IDs.
            return .failed(error, retryAt: nil)
        }
    }
}

/// Which queued rows a round considers.
enum RoundFilter: Sendable, Equatable {
    /// All of the signed-in user's rows.
    case all
    /// The rows of one datastore.
    case datastore(DatastoreID)
    /// The rows of one object.
    case object(ObjectKey)

    func matches(_ row: OutboxRow) -> Bool { matches(row.head) }

    func matches(_ head: OutboxHead) -> Bool {
        switch self {
        case .all: true
        case .datastore(let datastore): head.key.datastore == datastore
        case .object(let key): head.key == key
        }
    }
}

/// How a round ended.
enum RoundOutcome: Sendable {
    /// Nothing is queued (or nobody is signed in).
    case idle
    /// Rows are queued but none is due; look again at this time, if any.
    case waiting(until: Int64?)
    /// A push was answered (or a culprit set aside); `answered` rows were settled; `more`: due
    /// rows were left for the next push (limits, isolation).
    case sent(answered: Int, more: Bool)
    /// The round failed; the rows are pending again. Look again at this time, if any.
    case failed(RooftopError, retryAt: Int64?)
}
