import RooftopShared

/// One answer to a ``RooftopQuery``: a page of live objects, the total count and where it came
/// from (Backbeam's `success(objects, totalCount, fromCache)`).
///
/// (Named apart from the shared `QueryResult` — the evaluator's result over snapshots — so that
/// an app importing both modules can name either.)
///
/// Objects are the client's live instances (one per object, as in Parse's local datastore): the same object in two
/// results, or already held by the app, is the same instance.
///
/// ```swift
/// let page = try await client.query("GameScore").limit(20).offset(40).find()
/// print("\(page.objects.count) of \(page.totalCount), cached: \(page.fromCache)")
/// ```
public struct FetchResult: Sendable {
    /// The matching objects after ordering, offset and limit.
    public var objects: [RooftopObject]
    /// How many objects matched before offset and limit (for a cached result: the server's
    /// count when it was stored, less the stored objects that no longer match locally).
    public var totalCount: Int
    /// Whether the result was read from the local datastore (a cached result, or a
    /// `fromLocalDatastore` / `fromPin` query) rather than received from the server.
    public var fromCache: Bool
    /// The objects reached through the query's include paths, each once. The result's objects
    /// also keep their states, so that ``RooftopObject/object(_:)`` finds them with their
    /// fields after the result is dropped.
    public var included: [RooftopObject]

    /// A result.
    /// - Parameters:
    ///   - objects: The page of objects.
    ///   - totalCount: The number of matches before paging.
    ///   - fromCache: Whether it was read locally.
    ///   - included: The included objects (default none).
    public init(objects: [RooftopObject], totalCount: Int, fromCache: Bool, included: [RooftopObject] = []) {
        self.objects = objects
        self.totalCount = totalCount
        self.fromCache = fromCache
        self.included = included
    }

    /// The IDs of the objects, in order.
    public var objectIds: [String] { objects.map(\.objectId) }

    /// What the result shows: each object as it reads now, and the count (to tell two results
    /// apart, e.g. when observing a query).
    var fingerprint: Fingerprint {
        Fingerprint(objects: objects.map(\.snapshot), totalCount: totalCount, fromCache: fromCache)
    }

    struct Fingerprint: Hashable {
        var objects: [ObjectSnapshot]
        var totalCount: Int
        var fromCache: Bool
    }
}
