import RooftopShared

extension RooftopQuery {
    /// The query's local result over time: evaluated at once, then again whenever an object of
    /// its class in its datastore changes — stored, pinned, synced, or edited without saving —
    /// and yielded when it reads differently. Bursts of changes coalesce into one evaluation.
    ///
    /// A `fromLocalDatastore` or `fromPin` query is evaluated over its source; a server query
    /// over its cached result (as ``FetchPolicy/localOnly`` reads it), and until something is
    /// cached it yields an empty result. Refresh the cache with `find(policy: .remoteAndStore)`
    /// and the stream follows. Every result has `fromCache` set. The stream ends when the
    /// iterating task stops or the client shuts down.
    ///
    /// ```swift
    /// let top = client.query("GameScore").order(by: "score", descending: true).limit(10)
    /// Task { try await top.find(policy: .remoteAndStore) }
    /// for await page in top.changes() { render(page.objects) }
    /// ```
    public func changes() -> AsyncStream<FetchResult> {
        let query = self
        return ObservationStream.make(
            core: core,
            isRelevant: { change in
                change.objects.contains { $0.className == query.className && $0.datastore == query.datastore }
            },
            read: { () throws(RooftopError) -> FetchResult in
                if query.isLocal { return try query.runLocally() }
                return try query.cachedResult() ?? FetchResult(objects: [], totalCount: 0, fromCache: true)
            },
            identity: \.fingerprint)
    }
}
