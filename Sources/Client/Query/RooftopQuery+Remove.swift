import RooftopShared

/// Removing the objects that match a query, on the server (Backbeam's `removeObjects:` and
/// `removeAllObjects`).
extension RooftopQuery {
    /// Deletes on the server the first `limit` objects that match (in the query's order, after
    /// its offset) and that the user may delete; objects the user may not delete are skipped.
    /// The local copies of removed objects are dropped.
    ///
    /// ```swift
    /// let removed = try await client.query("GameScore").where(Field("score") < 10).remove(limit: 10)
    /// ```
    /// - Parameter limit: At most how many objects (>= 0).
    /// - Returns: How many objects were deleted.
    /// - Throws: `illegalArgument` for a negative limit; network errors and the server's refusals.
    @discardableResult
    public func remove(limit: Int) async throws -> Int {
        guard limit >= 0 else { throw RooftopError(.illegalArgument, "the limit of a removal must not be negative") }
        return try await remove(upTo: limit)
    }

    /// Deletes on the server every object that matches (after the query's offset) and that the
    /// user may delete; the local copies of removed objects are dropped.
    ///
    /// ```swift
    /// try await client.query("Session").where(Field("expired") == true).removeAll()
    /// ```
    /// - Returns: How many objects were deleted.
    /// - Throws: Network errors and the server's refusals.
    @discardableResult
    public func removeAll() async throws -> Int {
        try await remove(upTo: nil)
    }

    private func remove(upTo limit: Int?) async throws(RooftopError) -> Int {
        var request = query
        request.includes = []
        let removed = try await core.api.remove(RemoveRequest(query: .query(request), limit: limit), in: datastore)
        if removed > 0 { try await forgetRemoved(matching: request) }
        return removed
    }

    /// Drops the local copies of objects the server no longer has. The answer to a removal is a
    /// count, so the candidates — stored objects whose last server state matches the condition —
    /// are checked with the server, and those it no longer returns are dropped, with their pins,
    /// and their live instances emptied (as after ``RooftopObject/delete()``). Objects the server
    /// removed whose stored state was stale go at the next sync, as every remote deletion does.
    private func forgetRemoved(matching query: Query) async throws(RooftopError) {
        let candidates = try core.store.objects(scope: core.scope, datastore: datastore, className: query.className)
            .filter { row in
                guard let server = row.server else { return false }
                return query.predicate.map { QueryEvaluator.matches(server, $0) } ?? true
            }
            .map(\.key)
        guard !candidates.isEmpty else { return }
        var gone: [ObjectKey] = []
        // Pages the server answers whole: its default page size.
        let pageSize = Limits.default.defaultQueryLimit
        for start in stride(from: 0, to: candidates.count, by: pageSize) {
            let page = Array(candidates[start..<min(start + pageSize, candidates.count)])
            let check = Query(className: query.className, predicate: .thisIn(page.map { .objectId($0.objectId) }))
                .limit(page.count)
            let present = Set(try await core.api.query(.query(check), in: datastore).objects.map(ObjectKey.init))
            gone += page.filter { !present.contains($0) }
        }
        guard !gone.isEmpty else { return }
        try core.store.write(scope: core.scope) { transaction in
            for key in gone { try transaction.remove(key) }
        }
        for key in gone {
            guard let live = core.registry.existing(key) else { continue }
            live.revert()
            live.replaceBase(nil)
        }
    }
}
