import RooftopShared

extension RooftopObject {
    /// Saves the unsaved changes to the server now, after any of the object's changes still in the
    /// offline queue.
    ///
    /// The changes are sent as one idempotent mutation: when the answer is lost and the app saves
    /// again, the server applies them once. On success the object reads the server's state (with
    /// changes made meanwhile still unsaved on top), and the local copy, if the object is stored,
    /// is updated. Nothing is lost on failure: the changes stay unsaved.
    /// - Returns: The merge decisions the server took against concurrent changes.
    /// - Throws: `illegalArgument` / `invalidOperation` before anything is sent, for a field name
    ///   set through the subscript that is invalid or built-in; network errors (`noConnection`,
    ///   `timeout`, ...), the server's refusal (`disallowed`, `badType`, `sizeLimit`, ...).
    @discardableResult
    public func save() async throws -> [MergeDecision] {
        try validateUnsavedFields()
        try await core.flushQueue(for: key)
        guard let pending = pendingChange() else { return [] }
        let mutation = Mutation(
            mutationId: pending.saveID, datastore: datastore, className: className, objectId: objectId,
            baseVersion: try core.syncedVersion(of: key, fallback: version), change: pending.change)
        let result = try await core.api.push(PushRequest(mutations: [mutation])).results.first
        switch result {
        case .applied(_, _, let object, let merges)?:
            clearSaved(count: pending.count, base: object)
            if let object { try core.storeServerState(object) }
            return merges
        case .rejected(_, let error)?:
            throw error
        case nil:
            throw RooftopError(.response, "the server answered a push of one mutation with no result")
        }
    }

    /// Queues the unsaved changes durably and returns: they are in the local database, and the
    /// object is pinned (label `_pending`) until the server has them. The queue sends them in
    /// order, exactly once, when the server can be reached (Parse's saveEventually).
    /// - Returns: The queued mutation's ID (its status is observable on the client's outbox).
    /// - Throws: `illegalArgument` / `invalidOperation` for a field name set through the
    ///   subscript that is invalid or built-in; `sizeLimit` when the change would make the record
    ///   larger than `maxRecordBytes` (``ClientConfiguration/limits``); `cache` when the local
    ///   database fails. Nothing is queued then, and the changes stay unsaved.
    @discardableResult
    public func saveEventually() async throws -> MutationID? {
        try validateUnsavedFields()
        guard let pending = pendingChange() else { return nil }
        return try await core.enqueue(pending.change, for: self, count: pending.count)
    }

    /// Deletes the object on the server now (and its local copy).
    /// - Throws: Network errors, the server's refusal.
    public func delete() async throws {
        try await core.flushQueue(for: key)
        let mutation = Mutation(
            datastore: datastore, className: className, objectId: objectId,
            baseVersion: try core.syncedVersion(of: key, fallback: version), change: .delete)
        let result = try await core.api.push(PushRequest(mutations: [mutation])).results.first
        if let error = result?.error { throw error }
        revert()
        markDeleted()
        try core.store.write(scope: core.scope) { transaction in try transaction.remove(key) }
    }

    /// Queues the object's deletion durably; it disappears from local queries at once.
    /// - Returns: The queued mutation's ID.
    @discardableResult
    public func deleteEventually() async throws -> MutationID {
        revert()
        guard let id = try await core.enqueue(.delete, for: self, count: 0) else {
            throw RooftopError(.internal, "a delete was not queued")
        }
        markDeleted()
        return id
    }

    /// Reads the object's current state from the server (unsaved changes stay on top); the local
    /// copy is updated when the object is stored.
    /// - Throws: `notFound` when it does not exist or may not be read; network errors.
    public func fetch() async throws {
        try await refresh(including: [])
    }

    /// Fetches the object and the objects its pointer paths reach (Backbeam's refresh with
    /// joins): `refresh(including: ["author"], ["author", "company"])`. Included objects are
    /// updated the same way (their live instances and local copies).
    /// - Throws: `notFound`, network errors.
    public func refresh(including paths: [String]...) async throws {
        try await refresh(including: paths)
    }

    /// Fetches the object and the objects its pointer paths reach.
    public func refresh(including paths: [[String]]) async throws {
        let answer = try await core.api.object(key, includes: paths)
        replaceBase(answer.object)
        try core.storeServerState(answer.object)
        for included in answer.included {
            _ = core.materialize(included)
            try core.storeServerState(included)
        }
        keepIncluded(Dictionary(answer.included.map { (ObjectKey($0), $0) }) { _, newer in newer })
    }

    // MARK: Pins

    /// Stores the object in the local datastore under a label (default: the unnamed pin), with
    /// the objects its pointer fields reach that are known locally (pinning is recursive). A stored
    /// object is updated whenever it is fetched or saved, and stays while any label holds it.
    /// - Throws: `cache`.
    public func pin(label: String? = nil) async throws {
        try core.pin([self], label: label ?? LocalStore.defaultLabel)
    }

    /// Removes a label from the object; the object leaves the local datastore when no label (and
    /// no queued change) holds it any more.
    public func unpin(label: String? = nil) async throws {
        try core.unpin([self], label: label ?? LocalStore.defaultLabel)
    }

    /// The labels the object is stored under.
    public func pinLabels() throws -> Set<String> {
        try core.store.labels(of: key, scope: core.scope)
    }
}
