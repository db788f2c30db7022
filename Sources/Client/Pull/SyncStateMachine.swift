import RooftopShared

/// The pull of one datastore as a pure state machine: events in, actions out. The driver
/// (``SyncEngine``) does the I/O the actions ask for and feeds back what happened, so every
/// transition is tested without a network.
///
/// ```
/// idle ──start──▶ requesting ──received──▶ applying ──applied──▶ requesting (hasMore)
///                  │    ▲                     │                  └──────▶ finished
///                  │    └──retryTimerFired──┐ └──applyFailed──▶ failed
///                  └──requestFailed──▶ (retry later | purge + fail | fail)
/// ```
///
/// - Each page is applied with its checkpoint in one transaction (`applyPage`), so an
///   interrupted pull resumes after the last page applied.
/// - Progress: `processed` counts the changes applied; `total` is what was applied plus the page
///   in hand plus the server's estimate of what remains (`remaining`); when the pull finishes,
///   `total == processed`. The first page's report comes before it is applied (the total is
///   known before any change lands, as in Cloudant Sync).
/// - A passing failure of a request (`RooftopError/isTransient`) asks to retry later, up to
///   `maxRetries` times in a row; `notFound` (the datastore is gone or access to it was lost)
///   asks to purge the local copy, then fails. A checkpoint the server no longer accepts
///   (`illegalArgument`: "pull again without one", or `historyExpired`: older than the history
///   the server keeps) restarts the pull from the beginning, once (`startOver`): the driver then
///   drops the local copies the new pull does not send again.
struct SyncStateMachine: Sendable, Equatable {
    /// Where the pull is.
    enum Phase: Sendable, Equatable {
        case idle, requesting, applying, finished, failed
    }

    /// What one page holds, as far as the machine cares (the changes stay with the driver).
    struct Page: Sendable, Equatable {
        var count: Int
        var checkpoint: Checkpoint
        var hasMore: Bool
        var remaining: Int?

        init(count: Int, checkpoint: Checkpoint, hasMore: Bool, remaining: Int?) {
            self.count = count
            self.checkpoint = checkpoint
            self.hasMore = hasMore
            self.remaining = remaining
        }

        init(_ response: PullResponse) {
            self.init(
                count: response.changes.count, checkpoint: response.checkpoint, hasMore: response.hasMore,
                remaining: response.remaining)
        }
    }

    /// What happened.
    enum Event: Sendable, Equatable {
        /// Start from a stored checkpoint (`nil`: from the beginning).
        case start(checkpoint: Checkpoint?)
        /// A page arrived.
        case received(Page)
        /// The page in hand was applied with its checkpoint.
        case applied
        /// The page request failed.
        case requestFailed(RooftopError)
        /// Applying the page failed (nothing of it was stored).
        case applyFailed(RooftopError)
        /// The retry delay passed.
        case retryTimerFired
    }

    /// What the driver must do, in order.
    enum Action: Sendable, Equatable {
        /// Request the page after this checkpoint.
        case requestPage(since: Checkpoint?)
        /// Apply the page in hand and store this checkpoint with it, in one transaction.
        case applyPage(checkpoint: Checkpoint)
        /// Report progress.
        case reportProgress(processed: Int, total: Int?)
        /// Drop the local copy of the datastore.
        case purgeDatastore
        /// The pull starts over from the beginning: when it finishes, the local copies (in its
        /// classes) that it did not send again are gone from the server or out of reach.
        case startOver
        /// Wait before retrying (retry number `attempt`, for the backoff), then send `retryTimerFired`.
        case retryLater(attempt: Int)
        /// The pull is complete.
        case finish(processed: Int)
        /// The pull failed.
        case fail(RooftopError)
    }

    /// How many passing request failures in a row are retried.
    let maxRetries: Int
    private(set) var phase = Phase.idle
    /// The last checkpoint applied (or started from).
    private(set) var checkpoint: Checkpoint?
    /// Changes applied.
    private(set) var processed = 0
    /// The estimated total.
    private(set) var total: Int?
    private var page: Page?
    private var retries = 0
    private var reportedFirst = false
    private var restarted = false

    /// A machine that retries passing failures `maxRetries` times in a row.
    init(maxRetries: Int = 0) {
        self.maxRetries = maxRetries
    }

    /// Takes an event; returns the actions to perform. Events that make no sense in the current
    /// phase are ignored (no actions).
    mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.idle, .start(let checkpoint)):
            self.checkpoint = checkpoint
            phase = .requesting
            return [.requestPage(since: checkpoint)]

        case (.requesting, .received(let received)):
            if received.count == 0, received.hasMore, received.checkpoint == checkpoint {
                phase = .failed
                return [.fail(RooftopError(.response, "the server sent an empty page that does not advance"))]
            }
            retries = 0
            page = received
            if received.hasMore {
                total = received.remaining.map { processed + received.count + $0 }
            } else {
                total = processed + received.count
            }
            phase = .applying
            var actions: [Action] = []
            if !reportedFirst {
                reportedFirst = true
                actions.append(.reportProgress(processed: processed, total: total))
            }
            return actions + [.applyPage(checkpoint: received.checkpoint)]

        case (.applying, .applied):
            guard let applied = page else { return [] }
            page = nil
            processed += applied.count
            checkpoint = applied.checkpoint
            if applied.hasMore {
                total = total.map { max($0, processed) }
                phase = .requesting
                return [.reportProgress(processed: processed, total: total), .requestPage(since: checkpoint)]
            }
            total = processed
            phase = .finished
            return [.reportProgress(processed: processed, total: total), .finish(processed: processed)]

        case (.requesting, .requestFailed(let error)):
            if error.code == .notFound {
                phase = .failed
                return [.purgeDatastore, .fail(error)]
            }
            if error.code == .illegalArgument || error.code == .historyExpired, checkpoint != nil, !restarted {
                restarted = true
                checkpoint = nil
                return [.startOver, .requestPage(since: nil)]
            }
            if error.isTransient, retries < maxRetries {
                retries += 1
                return [.retryLater(attempt: retries)]
            }
            phase = .failed
            return [.fail(error)]

        case (.requesting, .retryTimerFired):
            return [.requestPage(since: checkpoint)]

        case (.applying, .applyFailed(let error)):
            page = nil
            phase = .failed
            return [.fail(error)]

        default:
            return []
        }
    }
}
