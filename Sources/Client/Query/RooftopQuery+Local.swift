import RooftopSQL
import RooftopShared

/// Local runs: the query answered in SQL by the local store (``LocalStore/find(_:scope:datastore:pinnedWith:readers:excluding:keepingFlags:)``,
/// the server's compiler over the same index layout), with the objects that hold unsaved edits
/// evaluated by the shared ``QueryEvaluator`` as they read now and merged into the page, filtered
/// by ACL.
extension RooftopQuery {
    /// The cache key of this query in its datastore.
    var cacheHash: String {
        get throws(RooftopError) { try QueryCacheKey.hash(query, in: datastore) }
    }

    /// Runs the query over its local source (`fromLocalDatastore` or `fromPin`).
    ///
    /// SQLite answers it (``LocalStore/find(_:scope:datastore:pinnedWith:readers:excluding:keepingFlags:)``):
    /// conditions, readers, order, offset, limit and the total count. The page's objects are made
    /// from their stored texts and decoded when first read. Live objects with unsaved changes
    /// read differently from what is stored: they are left out of the SQL, evaluated in Swift as
    /// they read now, and merged into the page in order (the SQL then reads the first
    /// `offset + limit` matches, so that the merged page is exact).
    func runLocally() throws(RooftopError) -> FetchResult {
        let label: String? = if case .pin(let label) = source { label } else { nil }
        let edited = try editedRows(pinnedWith: label)
        var stored = query
        stored.includes = []
        if !edited.isEmpty {
            let (end, overflow) = max(query.offset, 0).addingReportingOverflow(query.limit ?? Int.max)
            stored.offset = 0
            stored.limit = overflow ? nil : end
        }
        let (scope, readers) = localReaders()
        let page = try core.store.find(
            stored, scope: scope, datastore: datastore, pinnedWith: label, readers: readers,
            excluding: edited.map(\.key.objectId))
        var totalCount = page.totalCount
        var final = query
        if edited.isEmpty {
            // The rows are the page, ordered and filtered (readers too) by SQL: without includes
            // to look up, and with every live instance reading as its stored view (one may lag
            // behind a write just committed, or be edited since the edited rows were listed),
            // they are the result as they are.
            if query.includes.isEmpty, let objects = try core.instancesReadingAsStored(page.rows) {
                return FetchResult(objects: objects, totalCount: totalCount, fromCache: true, included: [])
            }
            // Included again, not skipped a second time.
            final.offset = 0
        } else {
            totalCount += matchCount(of: edited)
        }
        var rows = try page.rows.map { row throws(RooftopError) in try row.decoded() }
        rows += edited
        let evaluated = try evaluate(final, over: rows)
        return FetchResult(
            objects: evaluated.objects, totalCount: totalCount, fromCache: true, included: evaluated.included)
    }

    /// The number of matches in the query's local source, counted by SQLite without reading the
    /// objects (plus the live objects with unsaved changes that match as they read now).
    func countLocally() throws(RooftopError) -> Int {
        let label: String? = if case .pin(let label) = source { label } else { nil }
        let edited = try editedRows(pinnedWith: label)
        let (scope, readers) = localReaders()
        var total = try core.store.count(
            query, scope: scope, datastore: datastore, pinnedWith: label, readers: readers,
            excluding: edited.map(\.key.objectId))
        if !edited.isEmpty { total += matchCount(of: edited) }
        return total
    }

    /// The scope the query reads and who it reads as (`nil` when it ignores ACLs). The store
    /// keeps its readable flags for them as it reads (computed again, once, after the user's
    /// principals changed).
    private func localReaders() -> (scope: String, readers: Set<String>?) {
        let (scope, access) = core.identity
        guard !ignoresACLs, let readers = SQLIndexRows.readers(for: access) else { return (scope, nil) }
        return (scope, readers)
    }

    /// How many of the edited rows match the query's predicate as they read now (readable ones
    /// only, unless ACLs are ignored): the shared evaluator, no paging.
    private func matchCount(of edited: [LocalObjectRow]) -> Int {
        var unpaged = query
        unpaged.offset = 0
        unpaged.limit = nil
        unpaged.includes = []
        let core = self.core
        let ignoresACLs = self.ignoresACLs
        return QueryEvaluator.run(
            unpaged, over: edited.compactMap { core.localState(of: $0) }, lookup: { _ in nil },
            canRead: { ignoresACLs || core.canRead($0) }
        ).totalCount
    }

    /// The stored rows of the query's class and datastore (pinned with `label` when given) whose
    /// live instances have unsaved changes.
    private func editedRows(pinnedWith label: String?) throws(RooftopError) -> [LocalObjectRow] {
        let className = query.className
        let datastore = self.datastore
        var rows: [LocalObjectRow] = []
        for object in core.registry.edited(in: datastore, className: className) {
            guard let row = try core.store.object(object.key, scope: core.scope), !row.deleted else { continue }
            if let label, !(try core.store.labels(of: object.key, scope: core.scope).contains(label)) { continue }
            rows.append(row)
        }
        return rows
    }

    /// The query's cached result (stored by `remoteAndStore`), evaluated again over the cached
    /// objects as they read now; `nil` when nothing is cached for this query.
    func cachedResult() throws(RooftopError) -> FetchResult? {
        let hash = try cacheHash
        guard let entry = try core.store.queryCache(scope: core.scope, hash: hash) else { return nil }
        let cachedKeys = Set(entry.objects)
        let rows = try core.store.objects(scope: core.scope, pinnedWith: LocalStore.queryLabel(hash))
            .filter { cachedKeys.contains($0.key) }
        // The cached objects are already the page: filter and order them again, without
        // skipping the offset a second time.
        var unpaged = query
        unpaged.offset = 0
        unpaged.limit = nil
        var evaluated = try evaluate(unpaged, over: rows)
        if let limit = query.limit, evaluated.objects.count > limit {
            evaluated.objects.removeLast(evaluated.objects.count - max(limit, 0))
        }
        // Objects of the stored page that no longer match (or were deleted, or became
        // unreadable) no longer count.
        let dropped = entry.objects.count - evaluated.totalCount
        let (remaining, overflow) = entry.totalCount.subtractingReportingOverflow(dropped)
        return FetchResult(
            objects: evaluated.objects, totalCount: overflow ? evaluated.totalCount : max(remaining, evaluated.totalCount),
            fromCache: true, included: evaluated.included)
    }

    /// The stored object with an ID, from the query's local source, when it is there and
    /// readable.
    func localObject(_ objectId: String) throws(RooftopError) -> RooftopObject? {
        let key = ObjectKey(datastore: datastore, className: query.className, objectId: objectId)
        guard let row = try core.store.object(key, scope: core.scope), !row.deleted else { return nil }
        if case .pin(let label) = source {
            guard try core.store.labels(of: key, scope: core.scope).contains(label) else { return nil }
        }
        guard let state = core.localState(of: row), ignoresACLs || core.canRead(state) else { return nil }
        return core.instance(for: row)
    }

    /// Evaluates a query over stored objects, each as it reads now; includes are looked up in
    /// the local datastore.
    private func evaluate(_ query: Query, over rows: [LocalObjectRow]) throws(RooftopError) -> Evaluated {
        var rowsByKey: [ObjectKey: LocalObjectRow] = [:]
        var states: [ObjectSnapshot] = []
        for row in rows {
            guard let state = core.localState(of: row) else { continue }
            rowsByKey[row.key] = row
            states.append(state)
        }
        let core = self.core
        let datastore = self.datastore
        let ignoresACLs = self.ignoresACLs
        // Pointers resolve in the query's datastore; a lookup that fails to read counts as
        // missing (an include is best effort) but is remembered to be reported.
        var lookupError: RooftopError?
        var lookedUp: [ObjectKey: LocalObjectRow] = [:]
        let result = QueryEvaluator.run(
            query, over: states,
            lookup: { pointer in
                let key = ObjectKey(datastore: datastore, className: pointer.className, objectId: pointer.objectId)
                do throws(RooftopError) {
                    var found = rowsByKey[key]
                    if found == nil { found = try core.store.object(key, scope: core.scope) }
                    // Not stored: a live instance (fetched, say) may still know it.
                    guard let row = found else { return core.registry.existing(key)?.snapshot }
                    guard !row.deleted else { return nil }
                    lookedUp[key] = row
                    return core.localState(of: row)
                } catch {
                    lookupError = error
                    return nil
                }
            },
            canRead: { ignoresACLs || core.canRead($0) })
        if let lookupError { throw lookupError }
        func live(_ snapshot: ObjectSnapshot) -> RooftopObject {
            let key = ObjectKey(snapshot)
            if let row = rowsByKey[key] ?? lookedUp[key] { return core.instance(for: row) }
            return core.registry.instance(for: key) { RooftopObject(key: key, base: snapshot, core: core) }
        }
        return Evaluated(
            objects: result.objects.map(live), totalCount: result.totalCount, included: result.included.map(live))
    }

    private struct Evaluated {
        var objects: [RooftopObject]
        var totalCount: Int
        var included: [RooftopObject]
    }
}
