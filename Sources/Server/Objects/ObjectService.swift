import Metrics
import RooftopShared

/// Every object write and single-object read goes through here: REST creates, updates and
/// deletes, and each mutation of a push.
///
/// A write is decided inside the storage's transaction, from the object as stored: access
/// (datastore role, class permission, object ACL), the merge with changes committed since the
/// mutation's base version (the class's merge rules), the change itself, and the limits. Then
/// live subscribers who could read the object before or after are told.
final class ObjectService: Sendable {
    private let storage: any ObjectStorage
    private let datastores: DatastoreService
    private let classes: ClassDirectory
    private let live: LiveHub
    private let limits: Limits
    private let clock: ServerClock

    init(
        storage: any ObjectStorage, datastores: DatastoreService, classes: ClassDirectory, live: LiveHub, limits: Limits,
        clock: ServerClock = .system
    ) {
        self.clock = clock
        self.storage = storage
        self.datastores = datastores
        self.classes = classes
        self.live = live
        self.limits = limits
    }

    /// Applies one mutation in a transaction of its own (REST writes; a push applies its
    /// mutations together, see ``prepare(_:context:idempotent:)``).
    /// - Parameters:
    ///   - mutation: The mutation.
    ///   - context: The caller.
    ///   - idempotent: Record the result under the mutation ID and answer retries from it.
    ///   - createOnly: Refuse with `exists` when the object exists (REST creates).
    ///   - mustExist: Refuse with `notFound` when the object does not exist, instead of creating
    ///     it (an update) or answering that it is already gone (a delete): REST `PATCH`/`DELETE`.
    /// - Returns: The result; a refusal inside the transaction is returned as `.rejected`, and so
    ///   is, for idempotent writes, a refusal found before it. A mutation ID seen before is
    ///   answered with its first result, before anything else is checked: access or input rules
    ///   that changed since must not turn a change the server applied into a rejection.
    /// - Throws: For writes that are not idempotent, refusals found before the transaction
    ///   (invalid input, unknown datastore, no write role); storage errors.
    func write(
        _ mutation: Mutation, context: AccessContext, idempotent: Bool, createOnly: Bool = false,
        mustExist: Bool = false
    ) async throws -> MutationResult {
        let prepared = try await prepare([mutation], context: context, idempotent: idempotent)[0]
        let applied = try await storage.writeObjects { writer in
            try self.apply(
                mutation, prepared, context: context, idempotent: idempotent, createOnly: createOnly, mustExist: mustExist,
                writer: writer)
        }
        await published([applied])
        return applied.result
    }

    /// A mutation checked and made ready for its write transaction, or answered already.
    enum Prepared: Sendable {
        /// Answered before the transaction: the first result of a mutation ID seen before
        /// (`record` false), or a refusal found before it (`record` true: recorded in the
        /// transaction, so that a retry gets it too).
        case answered(MutationResult, record: Bool)
        /// Ready to write: its datastore (with the caller's role) and its class's settings.
        case ready(DatastoreService.Resolved, ClassSettings)
    }

    /// What one write did, published once its transaction has committed.
    struct Applied: Sendable {
        /// The mutation's result.
        var result: MutationResult
        /// The ``OperationRecord/origin`` the mutation's operation carries (idempotent writes).
        var origin: String?
        /// The `outcome` label of `rooftop_mutations_total`, when the write was decided now.
        var outcome: String?
        /// The live notification a committed change sends, with its sequence.
        var notification: Notification?

        /// A committed change's live notification.
        struct Notification: Sendable {
            var datastore: DatastoreRecord
            var sequence: Int64
            var permissions: ClassPermissions
            var readers: Set<String>
        }
    }

    /// Everything a batch of mutations needs before its write transaction, read once: the
    /// results of IDs seen before (one read for the batch), the input checks, each datastore
    /// (resolved once per datastore) and each class's settings.
    /// - Throws: For writes that are not idempotent, the first refusal found; storage errors.
    func prepare(_ mutations: [Mutation], context: AccessContext, idempotent: Bool) async throws -> [Prepared] {
        let scope = ObjectService.idempotencyScope(context)
        let seen = idempotent ? try await storage.mutationResults(scope: scope, ids: mutations.map(\.mutationId)) : [:]
        var datastoresByID: [DatastoreID: DatastoreService.Resolved] = [:]
        var classSettings = ClassSettingsMemo(classes)
        var prepared: [Prepared] = []
        prepared.reserveCapacity(mutations.count)
        for mutation in mutations {
            if let first = seen[mutation.mutationId] {
                prepared.append(.answered(first, record: false))
                continue
            }
            do {
                try WriteValidator(limits: limits).validate(mutation)
                try Self.checkAnonymousACL(mutation, context: context)
                let resolved: DatastoreService.Resolved
                if let known = datastoresByID[mutation.datastore] {
                    resolved = known
                } else {
                    resolved = try await datastores.resolve(mutation.datastore, for: context, create: true)
                    datastoresByID[mutation.datastore] = resolved
                }
                prepared.append(.ready(resolved, try await classSettings.settings(of: mutation.className)))
            } catch let error as RooftopError where idempotent {
                prepared.append(.answered(.rejected(mutationId: mutation.mutationId, error: error), record: true))
            }
        }
        return prepared
    }

    /// Takes the locks the prepared mutations' writes need, before the first of them, and lets
    /// the storage read ahead what they will read (``ObjectWriter/lock(_:)``).
    /// - Throws: What the storage throws.
    func lock(
        _ mutations: [Mutation], _ prepared: [Prepared], context: AccessContext, idempotent: Bool,
        writer: any ObjectWriter
    ) throws {
        let scope = ObjectService.idempotencyScope(context)
        try writer.lock(
            zip(mutations, prepared).compactMap { mutation, prepared in
                guard case .ready(let resolved, _) = prepared else { return nil }
                return ObjectWriteRequest(
                    datastoreKey: resolved.record.key, className: mutation.className, objectId: mutation.objectId,
                    baseVersion: mutation.baseVersion, mutation: idempotent ? (scope: scope, id: mutation.mutationId) : nil)
            })
    }

    /// Applies one prepared mutation inside a write transaction (atomically on its own).
    /// - Parameters:
    ///   - chain: The caller's earlier mutations of the object in the same push, on the same base
    ///     version (see ``PushService``).
    ///   - recorder: Receives the merge inputs the decision used, for the chain's next mutation.
    /// - Throws: ``RooftopError`` when the write cannot be made (its datastore is gone); storage
    ///   errors, which end the transaction.
    func apply(
        _ mutation: Mutation, _ prepared: Prepared, context: AccessContext, idempotent: Bool, createOnly: Bool = false,
        mustExist: Bool = false, chain: WriteChain? = nil, recorder: MergeInputsRecorder? = nil,
        writer: any ObjectWriter
    ) throws -> Applied {
        let scope = ObjectService.idempotencyScope(context)
        let origin = idempotent ? ObjectService.origin(of: mutation.mutationId, scope: scope) : nil
        let resolved: DatastoreService.Resolved
        let settings: ClassSettings
        switch prepared {
        case .answered(let result, let record):
            return Applied(result: record ? try writer.record(result, scope: scope) : result, origin: origin)
        case .ready(let datastore, let classSettings):
            resolved = datastore
            settings = classSettings
        }
        let request = ObjectWriteRequest(
            datastoreKey: resolved.record.key, className: mutation.className, objectId: mutation.objectId,
            // A chain that knows what others committed up to its last version loads only what came after.
            baseVersion: chain.flatMap { $0.known == nil ? nil : $0.lastVersion } ?? mutation.baseVersion,
            mutation: idempotent ? (scope: scope, id: mutation.mutationId) : nil,
            datastoreLimits: (limits.maxRecordsPerDatastore, limits.maxDatastoreBytes))
        let decider = WriteDecider(
            mutation: mutation, context: context, role: resolved.role, settings: settings, limits: limits, now: clock.now(),
            createOnly: createOnly, mustExist: mustExist, origin: origin, chain: chain, recorder: recorder)
        let outcome = try writer.write(request) { writeContext throws(RooftopError) in
            try decider.decide(writeContext)
        }
        switch outcome {
        case .replayed(let result):
            return Applied(result: withMutationID(result, mutation.mutationId), origin: origin, outcome: "replayed")
        case .unchanged(let result):
            return Applied(result: withMutationID(result, mutation.mutationId), origin: origin, outcome: "unchanged")
        case .rejected(let error):
            return Applied(
                result: .rejected(mutationId: mutation.mutationId, error: error), origin: origin, outcome: "rejected")
        case .written(let stored, let readersBefore, let result):
            return Applied(
                result: withMutationID(result, mutation.mutationId), origin: origin, outcome: "applied",
                notification: Applied.Notification(
                    datastore: resolved.record, sequence: stored.sequence,
                    permissions: settings.permissions, readers: readersBefore.union(stored.readers)))
        }
    }

    /// Counts committed writes and tells live subscribers, in commit order.
    func published(_ applied: [Applied]) async {
        for one in applied {
            if let outcome = one.outcome {
                Counter(label: "rooftop_mutations_total", dimensions: [("outcome", outcome)]).increment()
            }
            if let note = one.notification {
                await live.publish(
                    datastore: note.datastore, sequence: note.sequence, permissions: note.permissions, readers: note.readers)
            }
        }
    }

    /// Runs `body` in one write transaction (see ``ObjectStorage/writeObjects(_:)``).
    func transaction<T: Sendable>(_ body: @Sendable (any ObjectWriter) throws -> T) async throws -> T {
        try await storage.writeObjects(body)
    }

    /// One object, with the pointers along `includes` resolved (only readable ones).
    func get(
        datastore: DatastoreID, className: String, objectId: String, includes: [[String]], context: AccessContext
    ) async throws -> (object: ObjectSnapshot, included: [ObjectSnapshot]) {
        try Identifier.validate(className, as: .className)
        try Identifier.validate(objectId, as: .objectId)
        let resolved = try await datastores.resolve(datastore, for: context, create: false)
        let permissions = try await classes.permissions(of: className)
        // The class permission first: refused or not, the answer must not depend on whether the
        // object exists.
        guard permissions.allows(.get, for: context) else {
            throw RooftopError(.disallowed, "the class permissions of \(className) do not allow get")
        }
        guard let stored = try await storage.object(
            datastoreKey: resolved.record.key, className: className, objectId: objectId), !stored.isDeleted
        else { throw RooftopError(.notFound, "no \(className) object \(objectId)") }
        // An object the caller may not read is answered as missing: its existence is not revealed.
        guard AccessPolicy.allows(
            .get, className: className, context: context, classPermissions: permissions, datastoreRole: resolved.role,
            acl: stored.snapshot.acl)
        else { throw RooftopError(.notFound, "no \(className) object \(objectId)") }
        let included = try await self.included(
            from: [stored.snapshot], paths: includes, datastore: resolved, context: context)
        return (stored.snapshot, included)
    }

    /// The most objects the includes of one request may read (each at most once).
    static let maxIncludedReads = 10_000

    /// The readable objects reachable from `objects` along pointer `paths`.
    ///
    /// Shared prefixes are followed once (`a.b` and `a.c` read `a` once) and every object is read
    /// at most once per request, so the work is bounded by the objects reached, not by the
    /// number of paths; past ``maxIncludedReads`` objects the request is refused. The loop stops
    /// when the request's deadline cancels it.
    /// - Throws: `sizeLimit` when the includes would read more than ``maxIncludedReads``
    ///   objects; `CancellationError` past the request's deadline.
    func included(
        from objects: [ObjectSnapshot], paths: [[String]], datastore: DatastoreService.Resolved, context: AccessContext
    ) async throws -> [ObjectSnapshot] {
        // Every prefix of every path, parents before children.
        var prefixes: Set<[String]> = []
        for path in paths {
            for length in path.indices { prefixes.insert(Array(path[...length])) }
        }
        var frontiers: [[String]: [ObjectSnapshot]] = [[]: objects]
        var looked: Set<Pointer> = []
        var readable: [Pointer: ObjectSnapshot] = [:]
        var classSettings = ClassSettingsMemo(classes)
        for prefix in prefixes.sorted(by: { $0.count < $1.count }) {
            try Task.checkCancellation()
            guard let field = prefix.last, let parent = frontiers[Array(prefix.dropLast())] else { continue }
            let pointers = Set(parent.compactMap { $0.fields[field]?.pointerValue })
            let unread = pointers.subtracting(looked)
            if !unread.isEmpty {
                guard looked.count + unread.count <= Self.maxIncludedReads else {
                    throw RooftopError(
                        .sizeLimit,
                        "the includes reach more than \(Self.maxIncludedReads) objects: include fewer paths or ask for fewer objects"
                    )
                }
                looked.formUnion(unread)
                let found = try await storage.objects(datastoreKey: datastore.record.key, pointers: Array(unread))
                for object in found {
                    let permissions = try await classSettings.permissions(of: object.snapshot.className)
                    if AccessPolicy.canRead(
                        object.snapshot, context: context, classPermissions: permissions, datastoreRole: datastore.role)
                    {
                        readable[object.snapshot.pointer] = object.snapshot
                    }
                }
            }
            frontiers[prefix] = pointers.compactMap { readable[$0] }
        }
        return readable.values.sorted { ($0.className, $0.objectId) < ($1.className, $1.objectId) }
    }

    /// Changes committed to an object after a version, for clients rebasing pending changes: those
    /// of the object's current incarnation (since it was last created) through the version read,
    /// when the caller may read all of them (``AccessPolicy/mayReadHistory(_:currentACL:context:)``).
    /// - Throws: `notFound` as a get answers it; `historyExpired` when some of them were removed by
    ///   the retention sweep, when `version` is from before the ID was last re-created (an earlier
    ///   incarnation, possibly someone else's object), or when the ACL changed after `version` (the
    ///   caller may not have been able to read what was written before): the client reads the
    ///   object again instead of rebasing.
    func operations(
        datastore: DatastoreID, className: String, objectId: String, after version: Int64, context: AccessContext
    ) async throws -> [OperationRecord] {
        let object = try await get(
            datastore: datastore, className: className, objectId: objectId, includes: [], context: context)
        let resolved = try await datastores.resolve(datastore, for: context, create: false)
        // From the change that made `version` too: when it was a delete, the history starts with a
        // creation, whose ACL is the object's first rather than a change.
        let records = try await storage.operations(
            datastoreKey: resolved.record.key, className: className, objectId: objectId, after: max(version, 1) - 1)
        // Read after the object: a change committed in between only adds at the end, and is left
        // out (it may be a delete and a re-creation by someone else).
        let current = object.object
        let history = records.filter { $0.version > version && $0.version <= current.version }
        let fromCreation = version == 0 || records.first.map { $0.version == version && $0.change == .delete } == true
        guard OperationRecord.complete(history, after: version, through: current.version),
            // A delete before the live version read: `version` is of an earlier incarnation.
            !history.contains(where: { $0.change == .delete }),
            AccessPolicy.mayReadHistory(history, currentACL: current.acl, context: context, fromCreation: fromCreation)
        else { throw Self.historyExpired(className: className, objectId: objectId, version: version) }
        return history
    }

    /// The refusal of a change (or a rebase) based on a version older than the history kept.
    static func historyExpired(className: String, objectId: String, version: Int64) -> RooftopError {
        RooftopError(
            .historyExpired,
            "\(className) object \(objectId) changed since version \(version) longer ago than the server keeps history: read the object and make the change again on its current state")
    }

    /// Refuses an anonymous write that sets an ACL the public may not read (`{}`, write access
    /// only, or read access for a user or role alone): an anonymous caller has no identity to
    /// grant to, so such an object could be found again by no one but the admin — or by a name
    /// nobody holds — and anonymous callers could fill a datastore with objects that no user can
    /// see or clean up. Signed-in callers may still make them (say, a report only the admin
    /// reads), under their name; class permissions can refuse anonymous writes altogether.
    /// - Throws: `disallowed`.
    static func checkAnonymousACL(_ mutation: Mutation, context: AccessContext) throws(RooftopError) {
        guard context.userId == nil, !context.isAdmin, case .update(_, let acl?) = mutation.change else { return }
        guard acl.readAccess(for: .everyone) else {
            throw RooftopError(
                .disallowed,
                "an anonymous write may only set an ACL the public may read: sign in, or let everyone (*) read the object")
        }
    }

    /// The scope mutation IDs are unique in: the user, or one shared scope each for anonymous
    /// and admin callers.
    static func idempotencyScope(_ context: AccessContext) -> String {
        if context.isAdmin { return ":admin" }
        return context.userId.map { "user:" + $0 } ?? ":anonymous"
    }

    /// The ``OperationRecord/origin`` of the operation a push mutation commits: opaque, the same
    /// for a retry, and different for another user's identical mutation ID. It starts with a tag
    /// of the scope (``originScope(_:)``), so that the decider can tell the operations of the same
    /// caller from those of others without learning who they are.
    static func origin(of mutationId: MutationID, scope: String) -> String {
        String(SessionToken.hash("scope\u{0}" + scope).prefix(16)) + "."
            + String(SessionToken.hash(scope + "\u{0}" + mutationId.rawValue).prefix(32))
    }

    /// The scope tag an origin made by ``origin(of:scope:)`` starts with; `nil` for origins
    /// without one (operations committed before tags existed, or not through a push).
    static func originScope(_ origin: String?) -> Substring? {
        guard let origin, let dot = origin.firstIndex(of: "."), dot != origin.startIndex else { return nil }
        return origin[..<dot]
    }

    private func withMutationID(_ result: MutationResult, _ id: MutationID) -> MutationResult {
        switch result {
        case .applied(_, let version, let object, let merges):
            .applied(mutationId: id, version: version, object: object, merges: merges)
        case .rejected(_, let error):
            .rejected(mutationId: id, error: error)
        }
    }
}
