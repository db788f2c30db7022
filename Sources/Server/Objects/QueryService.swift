import RooftopShared
import RooftopSQL

/// Queries, counts, and removing the objects a query matches.
///
/// Every read is filtered by the caller's access: the datastore role and the class permission
/// decide whether the query may run at all; object ACLs filter the rows in SQL (so counts and
/// pages never include unreadable objects); includes are filtered the same way.
final class QueryService: Sendable {
    private let storage: any ObjectStorage
    private let datastores: DatastoreService
    private let classes: ClassDirectory
    private let objects: ObjectService
    private let limits: Limits

    init(
        storage: any ObjectStorage, datastores: DatastoreService, classes: ClassDirectory, objects: ObjectService,
        limits: Limits
    ) {
        self.storage = storage
        self.datastores = datastores
        self.classes = classes
        self.objects = objects
        self.limits = limits
    }

    /// Runs a query: one page of objects as stored (decoded only where they include others),
    /// the total count, and the included objects.
    func find(_ request: QueryRequest, in datastore: DatastoreID, context: AccessContext) async throws -> QueryAnswer {
        let (query, resolved) = try await prepare(request, datastore: datastore, operation: .find, context: context)
        let page = try await storage.findStored(
            query, datastoreKey: resolved.record.key, readers: readers(context),
            limit: try limits.queryLimit(requested: query.limit))
        let included =
            query.includes.isEmpty
            ? []
            : try await objects.included(
                from: try page.objects.map { try $0.snapshot() }, paths: query.includes, datastore: resolved,
                context: context)
        return QueryAnswer(objects: page.objects, totalCount: page.totalCount, included: included)
    }

    /// Counts the readable objects a query matches.
    func count(_ request: QueryRequest, in datastore: DatastoreID, context: AccessContext) async throws -> Int {
        let (query, resolved) = try await prepare(request, datastore: datastore, operation: .count, context: context)
        // A count ignores the query's limit, which must still be one a find would accept.
        _ = try limits.queryLimit(requested: query.limit)
        return try await storage.count(query, datastoreKey: resolved.record.key, readers: readers(context))
    }

    /// Deletes the objects a query matches, in its order: the first `limit` (after `offset`), or
    /// all when `limit` is `nil`. Objects the caller may read but not delete are skipped.
    /// - Returns: How many objects were deleted.
    func remove(_ request: QueryRequest, in datastore: DatastoreID, limit: Int?, context: AccessContext) async throws
        -> Int
    {
        let (query, resolved) = try await prepare(request, datastore: datastore, operation: .find, context: context)
        // The query's own limit is replaced by the removal's, but must still be one a find accepts.
        _ = try limits.queryLimit(requested: query.limit)
        // Pages stay small, so the first removal comes soon after the request and a deadline finds
        // work done: a page is read whole before its first object is removed.
        let pageSize = min(limits.maxQueryLimit, Self.removalPageSize)
        var removed = 0
        var skipped = query.offset
        while limit.map({ removed < $0 }) ?? true {
            var pageQuery = query
            pageQuery.offset = skipped
            let wanted = limit.map { min(pageSize, $0 - removed) } ?? pageSize
            let page = try await storage.findStored(
                pageQuery, datastoreKey: resolved.record.key, readers: readers(context), limit: wanted)
            if page.objects.isEmpty { break }
            for object in page.objects {
                // Past the request's deadline: what was removed stays removed; a retry removes the rest.
                try Task.checkCancellation()
                let mutation = Mutation(
                    datastore: datastore, className: object.className, objectId: object.objectId,
                    baseVersion: object.version, change: .delete)
                let result = try await objects.write(mutation, context: context, idempotent: false)
                if result.isApplied { removed += 1 } else { skipped += 1 }
            }
        }
        return removed
    }

    /// The objects a removal reads at a time.
    static let removalPageSize = 100

    private func prepare(
        _ request: QueryRequest, datastore: DatastoreID, operation: AccessOperation, context: AccessContext
    ) async throws -> (Query, DatastoreService.Resolved) {
        let query = try request.validatedQuery(maxDepth: limits.maxNestingDepth)
        try QueryComplexity.check(query)
        let resolved = try await datastores.resolve(datastore, for: context, create: datastore.kind != .shareable)
        guard resolved.role.allows(operation) else {
            throw RooftopError(.disallowed, "your role on datastore \(datastore) does not allow \(operation)")
        }
        let permissions = try await classes.permissions(of: query.className)
        guard permissions.allows(operation, for: context) else {
            throw RooftopError(.disallowed, "the class permissions of \(query.className) do not allow \(operation)")
        }
        return (query, resolved)
    }

    private func readers(_ context: AccessContext) -> Set<String>? {
        SQLIndexRows.readers(for: context)
    }
}

/// A query's answer as the server sends it: ``QueryResponse``, except that the page's objects are
/// as stored (``FeedObject``), their bodies spliced into the answer as they are, never decoded
/// and encoded again.
struct QueryAnswer: Sendable {
    /// The page's objects, in the query's order.
    var objects: [FeedObject]
    /// How many objects match in all.
    var totalCount: Int
    /// The objects the page's include paths point to.
    var included: [ObjectSnapshot]

    /// The answer in the wire type, its objects decoded.
    /// - Throws: What decoding a stored body throws.
    func response() throws -> QueryResponse {
        QueryResponse(objects: try objects.map { try $0.snapshot() }, totalCount: totalCount, included: included)
    }
}

extension DocumentWriter {
    /// A query's answer in ``QueryResult``'s `Codable` form, each stored body spliced in as it is
    /// (``storedObject(_:)``).
    /// - Throws: What decoding a body that cannot be spliced throws.
    mutating func queryAnswer(_ answer: QueryAnswer) throws {
        raw("{\"objects\":[")
        for (index, object) in answer.objects.enumerated() {
            if index > 0 { raw(",") }
            try storedObject(object)
        }
        raw("],\"totalCount\":")
        int(Int64(answer.totalCount))
        raw(",\"included\":")
        try objectSnapshots(answer.included)
        raw("}")
    }
}
