import Metrics
import RooftopShared

/// The change feed: what a caller may read in a datastore since a checkpoint, in commit order,
/// in pages.
///
/// - Changes come in datastore sequence order (commit order), so a client that applies them in
///   order and stores each page's checkpoint never misses a committed change, whatever other
///   writers do meanwhile; an object changed again while a client pages through moves to a later
///   page and is delivered there.
/// - A readable object comes as an `upsert`; a deleted one the caller could read (any version, even
///   when it lost access before the delete) as a `tombstone`; an object the caller could once read but no longer can (its ACL changed, or
///   the caller left a role) as a `removal`. Objects the caller never could read are not
///   mentioned at all.
/// - When the caller's principals changed since the checkpoint (a role added or removed), the
///   first page also carries removals for unchanged objects that are no longer readable, and
///   upserts of unchanged objects that became readable.
/// - Losing every role on the datastore makes the pull fail with `notFound`: the client drops its
///   copy of the datastore.
final class PullService: Sendable {
    private let storage: any Storage
    private let datastores: DatastoreService
    private let classes: ClassDirectory
    private let checkpoints: CheckpointCodec
    private let limits: Limits

    /// The most classes a pull's class filter may name.
    static let maxClassFilter = 1000

    init(
        storage: any Storage, datastores: DatastoreService, classes: ClassDirectory, checkpoints: CheckpointCodec,
        limits: Limits
    ) {
        self.storage = storage
        self.datastores = datastores
        self.classes = classes
        self.checkpoints = checkpoints
        self.limits = limits
    }

    /// One page of changes.
    func pull(_ request: PullRequest, context: AccessContext) async throws -> PullResponse {
        let pageSize = try limits.pullPageSize(requested: request.limit)
        let classFilter: Set<String>? = try request.classes.map { names in
            // Each name is a bound SQL variable; a datastore with more classes pulls them all.
            guard names.count <= PullService.maxClassFilter else {
                throw RooftopError(
                    .illegalArgument,
                    "a pull may name at most \(PullService.maxClassFilter) classes, not \(names.count)",
                    field: "classes")
            }
            for name in names { try Identifier.validate(name, as: .className) }
            return Set(names)
        }
        let resolved = try await datastores.resolve(request.datastore, for: context, create: true)
        guard resolved.role.allows(.find) else {
            throw RooftopError(.disallowed, "your role on datastore \(request.datastore) does not allow reading it")
        }
        let datastoreKey = resolved.record.key
        let userId = context.isAdmin ? "" : (context.userId ?? "")
        let principals = Set(context.principals.map(\.description))
        let since = try request.since.map { checkpoint throws(RooftopError) in
            try checkpoints.decode(checkpoint, datastoreKey: datastoreKey, userId: userId)
        }
        var afterSequence = since?.s ?? 0

        var changes: [PullChange] = []
        var pageBytes = 0
        if let since, Set(since.p) != principals, !context.isAdmin {
            let lost = try await storage.lostAccess(
                datastoreKey: datastoreKey, atSequence: since.s, formerPrincipals: Set(since.p),
                currentPrincipals: principals)
            changes += lost.filter { classFilter?.contains($0.className) ?? true }
                .map { PullChange.removal(className: $0.className, objectId: $0.objectId) }
            // Unchanged objects that became readable (the caller joined a role) come as upserts
            // too. When they do not fit in a page, the feed restarts from the beginning instead,
            // paged as a first pull is (it re-sends what the caller has, but misses nothing).
            let gained = try await storage.gainedAccess(
                datastoreKey: datastoreKey, atSequence: since.s, formerPrincipals: Set(since.p),
                currentPrincipals: principals, limit: pageSize + 1)
            var upserts: [PullChange] = []
            for row in gained where classFilter?.contains(row.snapshot.className) ?? true {
                if let change = try await change(for: row, context: context, principals: principals, formerPrincipals: []),
                    case .upsert(let object) = change
                {
                    upserts.append(change)
                    pageBytes += SizeAccounting.recordSize(object)
                }
            }
            if gained.count > pageSize || pageBytes > limits.maxPullPageBytes {
                afterSequence = 0
                pageBytes = 0
            } else {
                changes += upserts
            }
        }

        let rows = try await storage.changes(
            datastoreKey: datastoreKey, after: afterSequence, limit: pageSize + 1, classes: classFilter)
        var lastSequence = afterSequence
        var hasMore = false
        var deliveredFromFeed = 0
        for (index, row) in rows.enumerated() {
            if index == pageSize || (index > 0 && pageBytes > limits.maxPullPageBytes) {
                hasMore = true
                break
            }
            lastSequence = row.sequence
            guard
                let change = try await change(
                    for: row, context: context, principals: principals, formerPrincipals: Set(since?.p ?? []))
            else { continue }
            if case .upsert(let object) = change { pageBytes += SizeAccounting.recordSize(object) }
            changes.append(change)
            deliveredFromFeed += 1
        }
        // The estimate is counted once when paging starts, then counted down page by page
        // (recounted when it runs out early because of writes made meanwhile).
        var remaining = 0
        if hasMore {
            if let carried = since?.r, afterSequence == since?.s, carried - deliveredFromFeed > 0 {
                remaining = carried - deliveredFromFeed
            } else {
                remaining = try await storage.changeCount(
                    datastoreKey: datastoreKey, after: lastSequence, classes: classFilter,
                    readers: context.isAdmin ? nil : principals.union(since?.p ?? []))
            }
        }
        let checkpoint = try checkpoints.encode(
            .init(d: datastoreKey, u: userId, s: lastSequence, p: principals.sorted(), r: hasMore ? remaining : nil))
        Counter(label: "rooftop_pulled_changes_total").increment(by: changes.count)
        return PullResponse(changes: changes, checkpoint: checkpoint, hasMore: hasMore, remaining: remaining)
    }

    /// What the caller is told about one changed object, or `nil` when it must not hear of it.
    private func change(
        for row: StoredObject, context: AccessContext, principals: Set<String>, formerPrincipals: Set<String>
    ) async throws -> PullChange? {
        let snapshot = row.snapshot
        let permissions = try await classes.permissions(of: snapshot.className)
        // A class the caller may not find is left out of its feed entirely: even a removal would
        // list the IDs of objects it never could pull.
        guard permissions.allows(.find, for: context) else { return nil }
        let readableNow = context.isAdmin || !row.readers.isDisjoint(with: principals)
        // Could read some version, as the caller is now or was at the checkpoint: it may hold a copy.
        let couldRead = readableNow || !row.formerReaders.isDisjoint(with: principals.union(formerPrincipals))
        if row.isDeleted {
            // Also to a caller who lost access before the delete (an ACL change or leaving a role
            // since its checkpoint): the feed holds only the tombstone, and its copy must go.
            return couldRead
                ? .tombstone(className: snapshot.className, objectId: snapshot.objectId, version: snapshot.version)
                : nil
        }
        if readableNow { return .upsert(snapshot) }
        return couldRead ? .removal(className: snapshot.className, objectId: snapshot.objectId) : nil
    }
}
