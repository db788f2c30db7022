import RooftopShared

/// Where a query's results come from: the server, the query's cached result in the local
/// datastore, or both (Backbeam's fetch policies, plus ``remoteElseLocal``).
///
/// A query's *cached result* is what its last ``remoteAndStore`` run stored: the objects (pinned
/// under the label `_query:<hash>`, so they stay stored), their order and the server's total
/// count. Cached results are evaluated again locally when read: objects changed locally since
/// (unsaved changes included) show their current state, objects that no longer match drop out,
/// and objects the current user may not read (ACLs, role ACLs from the cached effective roles)
/// are left out.
///
/// Only ``remoteAndStore`` replaces the cached result; every policy that reaches the server
/// updates the local copies of stored (pinned) objects it returns.
///
/// ```swift
/// let query = client.query("GameScore").order(by: "score", descending: true).limit(10)
/// _ = try await query.find(policy: .remoteAndStore)          // refresh the cache
/// let offline = try await query.find(policy: .localOnly)     // read it back, no network
/// for try await page in query.results(policy: .localAndRemote) {
///     show(page.objects, stale: page.fromCache)              // cache first, then the network's
/// }
/// ```
public enum FetchPolicy: Sendable, Hashable, CaseIterable {
    /// The default. Results only come from the server; the cache is neither read nor written.
    /// Fails with the network error when the server cannot be reached.
    case remoteOnly
    /// Results only come from the query's cached result; the server is not contacted. Fails with
    /// `notCached` when nothing is cached for this query (as in Backbeam's SDK: "if no data is available the
    /// failure block is called").
    case localOnly
    /// The cached result first (when there is one), then the server's:
    /// ``RooftopQuery/results(policy:)`` yields twice (`fromCache` true, then false).
    /// ``RooftopQuery/find(policy:)`` returns the server's result.
    case localAndRemote
    /// The cached result when there is one, otherwise the server's; never both.
    case localOrRemote
    /// The server's result, which then replaces the query's cached result (the objects are
    /// stored and pinned under the query's label; objects of the previous result that no label
    /// holds any more are removed). Use it when the cache is known to be stale, e.g. after
    /// deleting or updating an object of a list.
    case remoteAndStore
    /// The server's result; when the server cannot be reached (`noConnection`, `timeout`,
    /// `network`) the cached result instead. Any other error (a refusal, a bad query) is thrown,
    /// and so is the connectivity error when nothing is cached.
    case remoteElseLocal
}

extension RooftopError {
    /// Whether the error says the server could not be reached (and not that it refused): the
    /// errors after which ``FetchPolicy/remoteElseLocal`` falls back to the cache.
    var isConnectivityFailure: Bool {
        code == .noConnection || code == .timeout || code == .network
    }
}
