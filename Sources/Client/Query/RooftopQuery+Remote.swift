import RooftopShared

/// Remote runs: the server's answer goes through the identity map, updates the stored copies of
/// the objects it returns (as in Parse's local datastore: pinned objects are updated when fetched) and, for
/// `remoteAndStore`, replaces the query's cached result.
extension RooftopQuery {
    /// Runs the query on the server.
    /// - Parameter store: Whether the answer replaces the query's cached result.
    func runRemotely(store: Bool) async throws(RooftopError) -> FetchResult {
        let response = try await core.api.query(.query(query), in: datastore)
        let hash = store ? try cacheHash : nil
        let core = self.core
        let datastore = self.datastore
        let views = try core.store.write(scope: core.scope) { transaction in
            var label: String?
            if let hash {
                // The new result is pinned first, then the previous one's other objects are
                // unpinned (and removed when nothing else holds them).
                try transaction.setQueryCache(
                    hash: hash, datastore: datastore, objects: response.objects.map(ObjectKey.init),
                    totalCount: response.totalCount)
                label = LocalStore.queryLabel(hash)
            }
            return try core.record(response.objects + response.included, storingAs: label, in: transaction)
        }
        let included = RooftopQuery.includedStates(response.included, in: views)
        return FetchResult(
            objects: response.objects.map { snapshot in
                let object = core.adopt(RooftopQuery.view(of: snapshot, in: views))
                object.keepIncluded(included)
                return object
            },
            totalCount: response.totalCount, fromCache: false,
            included: response.included.map { core.adopt(RooftopQuery.view(of: $0, in: views)) })
    }

    /// Counts the matching objects on the server.
    func countRemotely() async throws(RooftopError) -> Int {
        try await core.api.count(.query(query), in: datastore)
    }

    /// Fetches one object (and the query's includes from it) from the server.
    func remoteObject(_ objectId: String) async throws(RooftopError) -> RooftopObject {
        let key = ObjectKey(datastore: datastore, className: query.className, objectId: objectId)
        let answer = try await core.api.object(key, includes: query.includes)
        let core = self.core
        let views = try core.store.write(scope: core.scope) { transaction in
            try core.record([answer.object] + answer.included, in: transaction)
        }
        for included in answer.included { _ = core.adopt(RooftopQuery.view(of: included, in: views)) }
        let object = core.adopt(RooftopQuery.view(of: answer.object, in: views))
        object.keepIncluded(RooftopQuery.includedStates(answer.included, in: views))
        return object
    }

    /// The states of included objects, by key, as they read locally.
    static func includedStates(_ included: [ObjectSnapshot], in views: [ObjectKey: ObjectSnapshot?])
        -> [ObjectKey: ObjectSnapshot]
    {
        Dictionary(included.map { (ObjectKey($0), view(of: $0, in: views)) }) { _, newer in newer }
    }

    /// The state an object returned by the server reads as: its new local view when it is
    /// stored (queued changes on top), otherwise the server's state.
    static func view(of snapshot: ObjectSnapshot, in views: [ObjectKey: ObjectSnapshot?]) -> ObjectSnapshot {
        // A locally deleted object (a queued delete) has no local view: it reads as the server
        // has it until the delete reaches the server.
        (views[ObjectKey(snapshot)] ?? nil) ?? snapshot
    }
}
