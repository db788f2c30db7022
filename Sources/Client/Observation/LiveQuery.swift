import Observation
import RooftopShared
import Synchronization

/// A query's result that a SwiftUI view can hold: an `@Observable` object, updated on the main
/// actor whenever the result reads differently (an object of the query's class stored, synced,
/// pinned or edited), like SwiftData's `@Query` or Realm's `@ObservedResults`.
///
/// It follows ``RooftopQuery/changes()``: a `fromLocalDatastore` or `fromPin` query is evaluated
/// over its source; a server query over its cached result, which ``refresh(policy:)`` fetches.
/// Code outside SwiftUI reads the same results as an async sequence, ``updates``.
///
/// ```swift
/// struct TopScores: View {
///     @State private var scores = LiveQuery(client.query("GameScore").order(by: "score", descending: true).limit(10))
///
///     var body: some View {
///         List(scores.objects) { score in Text("\(score.int("score") ?? 0)") }
///             .task { await scores.refresh() }
///             .refreshable { await scores.refresh() }
///     }
/// }
/// ```
@MainActor
@Observable
public final class LiveQuery {
    /// The query followed.
    public let query: RooftopQuery
    /// The result's objects, in the query's order (empty until ``isLoaded``).
    public private(set) var objects: [RooftopObject] = []
    /// Every match, beyond `limit` and `offset`.
    public private(set) var totalCount = 0
    /// Whether a first result has been read.
    public private(set) var isLoaded = false
    /// Whether ``refresh(policy:)`` is fetching.
    public private(set) var isRefreshing = false
    /// The last refresh's error, `nil` after a refresh that succeeded.
    public private(set) var lastError: RooftopError?

    @ObservationIgnored private let following = FollowingTask()
    @ObservationIgnored private let shown = Broadcaster<FetchResult>(replayingLatest: true)
    /// What the result shown last read as when it was shown.
    @ObservationIgnored private var shownFingerprint: FetchResult.Fingerprint?

    /// The results this object shows, as an async sequence: the one shown now (once
    /// ``isLoaded``), then each one it shows after it, in order. It ends when the object goes
    /// away (or the client shuts down and nothing more can change).
    ///
    /// ```swift
    /// let scores = LiveQuery(client.query("GameScore").fromLocalDatastore())
    /// for await result in scores.updates where result.totalCount >= 10 { break }
    /// ```
    public var updates: AsyncStream<FetchResult> { shown.stream() }

    /// Follows a query's result; the first result arrives at once (read locally).
    /// - Parameter query: The query (its local source, or its cached server result).
    public init(_ query: RooftopQuery) {
        self.query = query
        let stream = query.changes()
        following.start { [weak self] in
            // Ends when the object goes away (its deinit cancels this) or the client shuts down.
            for await result in stream {
                guard let self else { return }
                self.show(result)
            }
            // The client shut down: nothing more can change.
            self?.shown.finish()
        }
    }

    /// Fetches the query from the server and stores the answer as its cached result, which the
    /// object shows by the time this returns (``objects`` and ``totalCount`` hold it). A failure
    /// is kept in ``lastError`` (the shown result stays).
    /// - Parameter policy: How to fetch (default ``FetchPolicy/remoteAndStore``).
    public func refresh(policy: FetchPolicy = .remoteAndStore) async {
        isRefreshing = true
        defer { isRefreshing = false }
        do {
            let result = try await query.find(policy: policy)
            lastError = nil
            if query.isLocal || policy != .remoteAndStore {
                show(result)
            } else if let cached = try query.cachedResult() {
                // The stored answer as the observation reads it (unsaved changes on top), shown
                // now rather than on a later turn of the main actor, when the observation's own
                // reading of it arrives (and shows the same).
                show(cached)
            }
        } catch let error as RooftopError {
            lastError = error
        } catch {
            lastError = RooftopError(.internal, "the query failed: \(error)")
        }
    }

    private func show(_ result: FetchResult) {
        // The observation's own reading of what a refresh already showed is not shown twice.
        let fingerprint = result.fingerprint
        guard fingerprint != shownFingerprint else { return }
        shownFingerprint = fingerprint
        if !isLoaded { isLoaded = true }
        if totalCount != result.totalCount { totalCount = result.totalCount }
        // Assigned even when the same objects come back: a result is only yielded when it reads
        // differently, so their fields changed, and views reading them must read again.
        objects = result.objects
        shown.publish(result)
    }
}

/// A datastore's sync status that a SwiftUI view can hold: an `@Observable` object, updated on the
/// main actor as the offline queue, pulls and the connection move (``Datastore/status``).
///
/// ```swift
/// struct SyncBadge: View {
///     @State private var sync = LiveSyncStatus(settings)
///
///     var body: some View {
///         Image(systemName: sync.status.connected ? "icloud" : "icloud.slash")
///         if sync.status.outgoing { ProgressView() }
///     }
/// }
/// ```
@MainActor
@Observable
public final class LiveSyncStatus {
    /// The datastore followed.
    public let datastore: Datastore
    /// The status now (all flags off until the first reading).
    public private(set) var status = DatastoreStatus()

    @ObservationIgnored private let following = FollowingTask()
    @ObservationIgnored private let shown = Broadcaster<DatastoreStatus>(replayingLatest: true)

    /// The statuses this object shows, as an async sequence: the one shown now (after the first
    /// reading), then each change, in order. It ends when the object goes away.
    ///
    /// ```swift
    /// let sync = LiveSyncStatus(try await client.datastores.open(.app))
    /// for await status in sync.updates where status.subscribed { break }
    /// ```
    public var updates: AsyncStream<DatastoreStatus> { shown.stream() }

    /// Follows a datastore's status; the first reading arrives at once.
    public init(_ datastore: Datastore) {
        self.datastore = datastore
        let stream = datastore.status
        following.start { [weak self] in
            for await status in stream {
                guard let self else { return }
                self.show(status)
            }
            self?.shown.finish()
        }
    }

    private func show(_ status: DatastoreStatus) {
        guard self.status != status || shown.latest == nil else { return }
        self.status = status
        shown.publish(status)
    }
}

/// The task that feeds an observable object on the main actor, cancelled when the object goes
/// away (the task holds it weakly; this box is released with it).
final class FollowingTask: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts `body` on the main actor.
    func start(_ body: @escaping @Sendable @MainActor () async -> Void) {
        let started = Task { @MainActor in await body() }
        task.withLock { $0 = started }
    }

    deinit { task.withLock { $0?.cancel() } }
}
