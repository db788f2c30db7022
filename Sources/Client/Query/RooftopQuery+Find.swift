import RooftopShared

extension RooftopQuery {
    /// Runs the query and returns one result.
    ///
    /// A `fromLocalDatastore` or `fromPin` query runs locally whatever the policy (`fromCache`
    /// is true). Otherwise the ``FetchPolicy`` decides; `.localAndRemote` returns the server's
    /// result here — use ``results(policy:)`` to get the cached one first.
    ///
    /// ```swift
    /// let page = try await client.query("GameScore").order(by: "score", descending: true)
    ///     .limit(10).offset(20).find(policy: .remoteElseLocal)
    /// ```
    /// - Parameter policy: Where results come from (default ``FetchPolicy/remoteOnly``).
    /// - Throws: `notCached` (`.localOnly` with nothing cached); network errors (`noConnection`,
    ///   `timeout`, ...) and the server's refusals (`invalidQuery`, `disallowed`, ...) for
    ///   policies that reach the server; `cache` when the local datastore fails.
    public func find(policy: FetchPolicy = .remoteOnly) async throws -> FetchResult {
        if isLocal { return try runLocally() }
        switch policy {
        case .remoteOnly, .localAndRemote:
            return try await runRemotely(store: false)
        case .remoteAndStore:
            return try await runRemotely(store: true)
        case .localOnly:
            guard let cached = try cachedResult() else { throw notCachedError() }
            return cached
        case .localOrRemote:
            if let cached = try cachedResult() { return cached }
            return try await runRemotely(store: false)
        case .remoteElseLocal:
            do {
                return try await runRemotely(store: false)
            } catch {
                guard error.isConnectivityFailure, let cached = try cachedResult() else { throw error }
                return cached
            }
        }
    }

    /// Runs the query and yields its results as they arrive: with `.localAndRemote`, the cached
    /// result (when there is one, `fromCache` true) and then the server's (as in Backbeam's SDK: "the
    /// success block can be called twice"); with any other policy, the one result of
    /// ``find(policy:)``. The stream then ends, or fails with what `find` would throw (after the
    /// cached result, for `.localAndRemote` when the server cannot be reached). Stopping the
    /// iteration cancels the request.
    ///
    /// ```swift
    /// for try await page in query.results(policy: .localAndRemote) {
    ///     render(page.objects, stale: page.fromCache)
    /// }
    /// ```
    /// - Parameter policy: Where results come from (default ``FetchPolicy/remoteOnly``).
    public func results(policy: FetchPolicy = .remoteOnly) -> AsyncThrowingStream<FetchResult, any Error> {
        let (stream, continuation) = AsyncThrowingStream<FetchResult, any Error>.makeStream()
        let query = self
        let task = Task {
            do {
                if policy == .localAndRemote, !query.isLocal {
                    if let cached = try query.cachedResult() { continuation.yield(cached) }
                    continuation.yield(try await query.runRemotely(store: false))
                } else {
                    continuation.yield(try await query.find(policy: policy))
                }
                continuation.finish()
            } catch {
                // Cancelled only when the iteration stopped (`onTermination`, which the stream
                // calls before it ends): the request's cancellation is not the consumer's error.
                // Ending the stream with it could reach a consumer that stopped before the stream
                // itself had ended.
                if Task.isCancelled {
                    continuation.finish()
                } else {
                    continuation.finish(throwing: error)
                }
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The first result, or `nil` when nothing matches (the query with a limit of 1).
    /// - Parameter policy: Where results come from (default ``FetchPolicy/remoteOnly``).
    /// - Throws: What ``find(policy:)`` throws.
    public func first(policy: FetchPolicy = .remoteOnly) async throws -> RooftopObject? {
        try await limit(1).find(policy: policy).objects.first
    }

    /// How many objects match (offset and limit are ignored).
    ///
    /// Local queries count locally; for the server source, the policy decides as for
    /// ``find(policy:)``, a cached result giving its total count (`.localAndRemote` and
    /// `.remoteAndStore` count on the server; nothing is cached by counting).
    /// - Parameter policy: Where the count comes from (default ``FetchPolicy/remoteOnly``).
    /// - Throws: What ``find(policy:)`` throws.
    public func count(policy: FetchPolicy = .remoteOnly) async throws -> Int {
        if isLocal { return try countLocally() }
        switch policy {
        case .remoteOnly, .localAndRemote, .remoteAndStore:
            return try await countRemotely()
        case .localOnly:
            guard let cached = try cachedResult() else { throw notCachedError() }
            return cached.totalCount
        case .localOrRemote:
            if let cached = try cachedResult() { return cached.totalCount }
            return try await countRemotely()
        case .remoteElseLocal:
            do {
                return try await countRemotely()
            } catch {
                guard error.isConnectivityFailure, let cached = try cachedResult() else { throw error }
                return cached.totalCount
            }
        }
    }

    /// The object of the query's class with an ID (Parse's `getObjectInBackgroundWithId`):
    /// from the server (with the query's include paths), or — for a `fromLocalDatastore` /
    /// `fromPin` query — from the local datastore, as it reads now and subject to its ACL unless
    /// the query ignores ACLs. The query's condition, order and page do not apply.
    ///
    /// ```swift
    /// let score = try await client.query("GameScore").fromLocalDatastore().getObject("xWMyZ4YE")
    /// ```
    /// - Throws: `notFound` when there is no such object (or it may not be read, or it is not
    ///   pinned with the query's label); network errors for the server source.
    public func getObject(_ objectId: String) async throws -> RooftopObject {
        guard isLocal else { return try await remoteObject(objectId) }
        guard let object = try localObject(objectId) else {
            throw RooftopError(.notFound, "\(query.className) \(objectId) is not in the local datastore\(pinSuffix)")
        }
        return object
    }

    private var pinSuffix: String {
        if case .pin(let label) = source { return " with the label '\(label)'" }
        return ""
    }

    private func notCachedError() -> RooftopError {
        RooftopError(
            .notCached,
            "no result of this \(query.className) query is cached in \(datastore); run it with .remoteAndStore first")
    }
}
