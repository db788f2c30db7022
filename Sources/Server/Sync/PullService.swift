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
    private let storage: any ChangeFeedStorage
    private let datastores: DatastoreService
    private let classes: ClassDirectory
    private let checkpoints: CheckpointCodec
    private let limits: Limits

    /// The most classes a pull's class filter may name.
    static let maxClassFilter = 1000

    init(
        storage: any ChangeFeedStorage, datastores: DatastoreService, classes: ClassDirectory, checkpoints: CheckpointCodec,
        limits: Limits
    ) {
        self.storage = storage
        self.datastores = datastores
        self.classes = classes
        self.checkpoints = checkpoints
        self.limits = limits
    }

    /// One page of changes: what the caller lost and gained access to since its checkpoint (when
    /// its principals changed), then the feed after the checkpoint's sequence, then the estimate
    /// of what remains.
    func pull(_ request: PullRequest, context: AccessContext) async throws -> PullPage {
        let pageSize = try limits.pullPageSize(requested: request.limit)
        let classFilter = try Self.classFilter(request.classes)
        let resolved = try await datastores.resolve(request.datastore, for: context, create: true)
        guard resolved.role.allows(.find) else {
            throw RooftopError(.disallowed, "your role on datastore \(request.datastore) does not allow reading it")
        }
        let datastoreKey = resolved.record.key
        let userId = context.isAdmin ? "" : (context.userId ?? "")
        let since = try request.since.map { checkpoint throws(RooftopError) in
            try checkpoints.decode(checkpoint, datastoreKey: datastoreKey, userId: userId)
        }
        let historyFrom = resolved.record.historyFrom
        if let since, since.sequence < historyFrom, since.historyFrom ?? 0 < historyFrom {
            // The history moved past it since: deletes and lost access after it may have been
            // swept, and only a pull from scratch (reconciled with what the client holds) is
            // complete. (A pull that began after the sweep pages through from below it safely.)
            throw RooftopError(
                .historyExpired,
                "the checkpoint is older than the history the server keeps: pull again from scratch, without a checkpoint")
        }
        var page = Page(
            datastoreKey: datastoreKey, context: context, principals: Set(context.principals.map(\.description)),
            classes: classFilter, since: since, size: pageSize)
        if let since, Set(since.principals) != page.principals, !context.isAdmin {
            try await addAccessChanges(since: since, to: &page)
        }
        try await addFeed(to: &page)
        let remaining = try await remaining(after: page)
        let checkpoint = try checkpoints.encode(
            .init(
                datastoreKey: datastoreKey, userId: userId, sequence: page.lastSequence, principals: page.principals.sorted(),
                remaining: page.hasMore ? remaining : nil, historyFrom: historyFrom > 0 ? historyFrom : nil))
        Counter(label: "rooftop_pulled_changes_total").increment(by: page.changes.count)
        // A client checking ACLs offline holds the roles it was told: tell them again when they
        // changed since the checkpoint (its principals differ), and on a pull from scratch.
        let tellRoles = context.userId != nil && !context.isAdmin && (since.map { Set($0.principals) != page.principals } ?? true)
        return PullPage(
            changes: page.changes, checkpoint: checkpoint, hasMore: page.hasMore, remaining: remaining,
            roles: tellRoles ? context.roles.sorted() : nil)
    }

    /// A page being put together.
    private struct Page {
        let datastoreKey: Int64
        let context: AccessContext
        /// The caller's principals now.
        let principals: Set<String>
        let classes: Set<String>?
        /// The checkpoint pulled from, if any.
        let since: CheckpointCodec.State?
        /// The caller as it was at the checkpoint (its roles then), when its principals changed
        /// since: who may still hear of objects it lost (``PullService/mayHearOfLoss(_:audience:)``).
        let formerContext: AccessContext?
        /// The most changes the page holds.
        let size: Int
        var changes: [PullPage.Change] = []
        var bytes = 0
        /// Where the feed is read from: the checkpoint's sequence, or 0 when gained access
        /// restarts it.
        var afterSequence: Int64
        /// The last feed sequence the page covers.
        var lastSequence: Int64
        var hasMore = false
        /// How many feed changes the page delivered.
        var deliveredFromFeed = 0

        init(
            datastoreKey: Int64, context: AccessContext, principals: Set<String>, classes: Set<String>?,
            since: CheckpointCodec.State?, size: Int
        ) {
            self.datastoreKey = datastoreKey
            self.context = context
            self.principals = principals
            self.classes = classes
            self.since = since
            self.size = size
            if let since, Set(since.principals) != principals, let userId = context.userId, !context.isAdmin {
                let roles = since.principals.compactMap { text -> String? in
                    guard case .role(let name) = try? Principal(text) else { return nil }
                    return name
                }
                formerContext = AccessContext(userId: userId, roles: Set(roles))
            } else {
                formerContext = nil
            }
            afterSequence = since?.sequence ?? 0
            lastSequence = afterSequence
        }

        /// Whether a class is in the pull's filter (every class without one).
        func includes(_ className: String) -> Bool { classes?.contains(className) ?? true }

        /// Who the page is for, taken once for its rows (not the whole page for each of them).
        var audience: Audience { Audience(context: context, principals: principals, formerContext: formerContext) }
    }

    /// Who a page is for: the caller now (``Page/context``, ``Page/principals``) and, when its
    /// principals changed since its checkpoint, as it was then (``Page/formerContext``).
    private struct Audience {
        let context: AccessContext
        let principals: Set<String>
        let formerContext: AccessContext?
    }

    /// The class filter of a pull, checked: at most ``maxClassFilter`` valid class names.
    private static func classFilter(_ names: [String]?) throws -> Set<String>? {
        try names.map { names in
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
    }

    /// The caller's principals changed since its checkpoint: removals of unchanged objects it can
    /// no longer read, and upserts of unchanged objects it now can. When those do not fit in a
    /// page, the feed restarts from the beginning instead, paged as a first pull is (it re-sends
    /// what the caller has, but misses nothing).
    private func addAccessChanges(since: CheckpointCodec.State, to page: inout Page) async throws {
        let former = Set(since.principals)
        let lost = try await storage.lostAccess(
            datastoreKey: page.datastoreKey, atSequence: since.sequence, formerPrincipals: former,
            currentPrincipals: page.principals)
        let gained = try await storage.gainedAccess(
            datastoreKey: page.datastoreKey, atSequence: since.sequence, formerPrincipals: former,
            currentPrincipals: page.principals, limit: page.size + 1)
        // Read after the rows, as the feed's are (``addFeed(to:)``).
        var classSettings = ClassSettingsMemo(classes)
        let audience = page.audience
        for pointer in lost where page.includes(pointer.className) {
            guard Self.mayHearOfLoss(try await classSettings.permissions(of: pointer.className), audience: audience)
            else { continue }
            page.changes.append(.notice(.removal(className: pointer.className, objectId: pointer.objectId)))
        }
        var upserts: [PullPage.Change] = []
        var bytes = 0
        for row in gained where page.includes(row.className) {
            if let change = try await change(
                for: row, audience: audience, formerPrincipals: [], classSettings: &classSettings),
                case .upsert(let object) = change
            {
                upserts.append(change)
                bytes += Self.size(of: object)
            }
        }
        if gained.count > page.size || bytes > limits.maxPullPageBytes {
            page.afterSequence = 0
            page.lastSequence = 0
        } else {
            page.changes += upserts
            page.bytes += bytes
        }
    }

    /// The feed after the page's sequence, in commit order, up to the page's size or byte limit.
    private func addFeed(to page: inout Page) async throws {
        let rows = try await storage.changes(
            datastoreKey: page.datastoreKey, after: page.afterSequence, limit: page.size + 1, classes: page.classes)
        // Each class's settings read once for the page, after its rows: a change of them that
        // committed before the rows were read is seen by every row.
        var classSettings = ClassSettingsMemo(classes)
        let former = Set(page.since?.principals ?? [])
        let audience = page.audience
        for (index, row) in rows.enumerated() {
            if index == page.size || (index > 0 && page.bytes > limits.maxPullPageBytes) {
                page.hasMore = true
                break
            }
            page.lastSequence = row.sequence
            guard
                let change = try await change(
                    for: row, audience: audience, formerPrincipals: former, classSettings: &classSettings)
            else { continue }
            if case .upsert(let object) = change { page.bytes += Self.size(of: object) }
            page.changes.append(change)
            page.deliveredFromFeed += 1
        }
    }

    /// The estimate of what remains after the page: counted once when paging starts, then counted
    /// down page by page (recounted when it runs out early because of writes made meanwhile).
    private func remaining(after page: Page) async throws -> Int {
        guard page.hasMore else { return 0 }
        if let carried = page.since?.remaining, page.afterSequence == page.since?.sequence,
            carried - page.deliveredFromFeed > 0
        {
            return carried - page.deliveredFromFeed
        }
        return try await storage.changeCount(
            datastoreKey: page.datastoreKey, after: page.lastSequence, classes: page.classes,
            readers: page.context.isAdmin ? nil : page.principals.union(page.since?.principals ?? []))
    }

    /// Whether a caller hears that it lost an object of a class with `permissions` (a removal, or
    /// a tombstone of what it could once read): when it may find the class now, or could have
    /// found it as it was at its checkpoint under the class's rule of today — leaving a role that
    /// let it find the class is no reason to keep copies the role let it pull. A class it may not
    /// find in either way is left out entirely: a removal would list IDs of objects it never could
    /// pull.
    private static func mayHearOfLoss(_ permissions: ClassPermissions, audience: Audience) -> Bool {
        permissions.allows(.find, for: audience.context)
            || audience.formerContext.map { permissions.allows(.find, for: $0) } == true
    }

    /// What the caller is told about one changed object, or `nil` when it must not hear of it.
    private func change(
        for row: FeedObject, audience: Audience, formerPrincipals: Set<String>, classSettings: inout ClassSettingsMemo
    ) async throws -> PullPage.Change? {
        let (context, principals) = (audience.context, audience.principals)
        let permissions = try await classSettings.permissions(of: row.className)
        // A class the caller may not find is left out of its feed (``mayHearOfLoss(_:audience:)``
        // for what it lost).
        let findsNow = permissions.allows(.find, for: context)
        guard findsNow || Self.mayHearOfLoss(permissions, audience: audience) else { return nil }
        let readableNow = context.isAdmin || !row.readers.isDisjoint(with: principals)
        // Could read some version, as the caller is now or was at the checkpoint: it may hold a copy.
        let couldRead = readableNow || !row.formerReaders.isDisjoint(with: principals.union(formerPrincipals))
        if row.isDeleted {
            // Also to a caller who lost access before the delete (an ACL change or leaving a role
            // since its checkpoint): the feed holds only the tombstone, and its copy must go.
            return couldRead
                ? .notice(.tombstone(className: row.className, objectId: row.objectId, version: row.version))
                : nil
        }
        if readableNow { return findsNow ? .upsert(row) : nil }
        return couldRead ? .notice(.removal(className: row.className, objectId: row.objectId)) : nil
    }

    /// What an upsert adds to a page's bytes (``Limits/maxPullPageBytes``): its stored body,
    /// which is what the page carries of it, and its names.
    private static func size(of object: FeedObject) -> Int {
        object.body.utf8.count + object.className.utf8.count + object.objectId.utf8.count
    }
}
