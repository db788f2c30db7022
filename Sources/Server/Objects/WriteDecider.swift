import RooftopShared

/// The decision for one mutation, made inside the storage's write transaction from the object as
/// stored. Pure: everything it needs is passed in, so it is the same on every backend.
struct WriteDecider: Sendable {
    let mutation: Mutation
    let context: AccessContext
    let role: SharingRole
    let settings: ClassSettings
    let limits: Limits
    let now: Timestamp
    /// Refuse when the object exists (REST creates).
    var createOnly = false
    /// Refuse with `notFound` instead of creating (an update) or answering "already gone" (a
    /// delete) when the object does not exist: REST `PATCH` and `DELETE` of one object.
    var mustExist = false
    /// The tag of the operation this mutation commits (``OperationRecord/origin``).
    var origin: String?
    /// The client's earlier mutations of this object in the same push, on the same base.
    var chain: WriteChain?
    /// Where to leave the merge inputs this decision used, for the next mutation of the chain.
    var recorder: MergeInputsRecorder?

    func decide(_ write: ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision {
        let current = write.current
        if createOnly, let current, !current.isDeleted {
            // Only a caller who may read the object learns that it exists. Any other is refused
            // as a create of an unused ID it may not make: first by the datastore role and class
            // permission, exactly as for any ID, then as `disallowed` without naming the object's ACL.
            try AccessPolicy.check(
                .create, className: mutation.className, context: context, classPermissions: settings.permissions,
                datastoreRole: role, acl: nil)
            guard ACL.allowsRead(current.snapshot.acl, for: context) else {
                throw RooftopError(
                    .disallowed, "the caller may not create \(mutation.className) object \(mutation.objectId)")
            }
            throw RooftopError(.exists, "\(mutation.className) object \(mutation.objectId) exists")
        }
        let inputs = mergeInputs(write)
        recorder?.record(inputs)
        return visible(try decision(write, inputs: inputs), merged: inputs.remote, current: current)
    }

    /// The decision, its merge decisions as computed.
    private func decision(_ write: ObjectWriteContext, inputs: MergeInputs) throws(RooftopError) -> ObjectWriteDecision {
        let current = write.current
        switch mutation.change {
        case .delete:
            guard let current, !current.isDeleted else {
                if mustExist { throw missing }
                // Deleting what is already gone is done: answer as applied, change nothing.
                return .unchanged(version: current?.snapshot.version ?? 0, object: nil, merges: [])
            }
            try check(.delete, acl: current.snapshot.acl)
            try checkHistory(write)
            return deletion(of: current.snapshot, merges: try deleteDecisions(inputs))
        case .update:
            guard let current, !current.isDeleted else {
                if mustExist { throw missing }
                try checkHistory(write)
                return try creation(
                    over: current, inputs: inputs, concurrent: write.concurrentChanges, datastore: write.datastore)
            }
            try check(.update, acl: current.snapshot.acl)
            try checkHistory(write)
            return try update(
                current.snapshot, inputs: inputs, concurrent: write.concurrentChanges, datastore: write.datastore)
        }
    }

    /// `decision` without its merge decisions when they could show the caller values it could not
    /// read: the field values at its base version and those of the changes it was merged with
    /// (`merged`), when the caller could not read every version they span
    /// (``AccessPolicy/mayReadHistory(_:currentACL:context:)``: the history holds an ACL change or
    /// an earlier incarnation, or the caller cannot read the object as stored, e.g. a change based
    /// on a version of someone else's deleted object). The outcome itself is unchanged.
    private func visible(_ decision: ObjectWriteDecision, merged: [OperationRecord], current: StoredObject?)
        -> ObjectWriteDecision
    {
        guard !merged.isEmpty,
            // With no base, the changes merged with are a deleted incarnation's, from its creation.
            !AccessPolicy.mayReadHistory(
                merged, currentACL: current?.snapshot.acl, context: context, fromCreation: mutation.baseVersion == nil)
        else { return decision }
        switch decision {
        case .write(let snapshot, let deleted, let operation, let merges) where !merges.isEmpty:
            return .write(snapshot: snapshot, deleted: deleted, operation: operation, merges: [])
        case .unchanged(let version, let object, let merges) where !merges.isEmpty:
            return .unchanged(version: version, object: object, merges: [])
        default:
            return decision
        }
    }

    /// Checks a write to an existing object (or a create, with `acl` nil). The datastore role and
    /// the class permission come first, as they do not depend on the object. Then an object the
    /// caller may not even read is answered as missing, exactly as a get answers it: refusing
    /// with `disallowed` would reveal that it exists. Only then does its write ACL decide.
    private func check(_ operation: AccessOperation, acl: ACL?) throws(RooftopError) {
        try AccessPolicy.check(
            operation, className: mutation.className, context: context, classPermissions: settings.permissions,
            datastoreRole: role, acl: nil)
        guard ACL.allowsRead(acl, for: context) else { throw missing }
        try AccessPolicy.check(
            operation, className: mutation.className, context: context, classPermissions: settings.permissions,
            datastoreRole: role, acl: acl)
    }

    /// Refuses a mutation whose base version is older than the history kept (after the access
    /// checks, so that only a caller who may write the object learns of its history).
    private func checkHistory(_ write: ObjectWriteContext) throws(RooftopError) {
        guard write.historyExpired else { return }
        throw ObjectService.historyExpired(
            className: mutation.className, objectId: mutation.objectId, version: mutation.baseVersion ?? 0)
    }

    /// The error for an object that does not exist or that the caller may not read.
    private var missing: RooftopError {
        RooftopError(.notFound, "no \(mutation.className) object \(mutation.objectId)")
    }

    var rules: MergeRules {
        MergeRules(classes: [mutation.className: settings.mergeRules])
    }

    /// The decisions of a delete that meets concurrent updates: one per field they changed,
    /// each with an absent result (the delete wins), as ``ObjectMerge`` documents.
    private func deleteDecisions(_ inputs: MergeInputs) throws(RooftopError) -> [MergeDecision] {
        guard !inputs.remote.isEmpty else { return [] }
        return try ObjectMerge.rebase(
            local: [.delete], over: inputs.remote.map(\.change), base: inputs.base, className: mutation.className,
            rules: rules
        ).decisions
    }

    private func deletion(of snapshot: ObjectSnapshot, merges: [MergeDecision] = []) -> ObjectWriteDecision {
        var tombstone = snapshot
        tombstone.fields = [:]
        tombstone.fieldVersions = nil
        tombstone.version = snapshot.version + 1
        tombstone.updatedAt = now
        let prior = snapshot.fields.mapValues { Optional($0) }
        return .write(
            snapshot: tombstone, deleted: true,
            operation: OperationRecord(version: tombstone.version, change: .delete, priorValues: prior, origin: origin),
            merges: merges)
    }

    /// Creating the object, or re-creating it over a tombstone. A change based on a version from
    /// before a concurrent delete loses to the delete (as in the Dropbox Datastore API: deletes win).
    private func creation(
        over tombstone: StoredObject?, inputs: MergeInputs, concurrent: [OperationRecord], datastore: DatastoreRecord
    ) throws(RooftopError) -> ObjectWriteDecision {
        if let tombstone, let base = mutation.baseVersion, base < tombstone.snapshot.version,
            !deletedByChain(tombstone, concurrent: concurrent)
        {
            let merged = try ObjectMerge.rebase(
                local: [mutation.change], over: inputs.remote.map(\.change), base: inputs.base,
                className: mutation.className, rules: rules)
            return .unchanged(version: tombstone.snapshot.version, object: nil, merges: merged.decisions)
        }
        if let tombstone, let lost = try lostToDelete(tombstone, incarnation: concurrent) { return lost }
        try check(.create, acl: nil)
        guard case .update(let updates, let acl) = mutation.change else {
            throw RooftopError(.internal, "a creation must be an update")
        }
        let fields = try FieldUpdate.apply(updates, to: [:])
        let objectACL: ACL
        if let acl {
            objectACL = acl
        } else {
            objectACL = try settings.permissions.defaultACL.acl(forCreator: context, className: mutation.className)
        }
        let version = (tombstone?.snapshot.version ?? 0) + 1
        let snapshot = ObjectSnapshot(
            className: mutation.className, objectId: mutation.objectId, datastore: datastore.id, fields: fields,
            acl: objectACL,
            createdAt: now, updatedAt: now, version: version)  // every field at `version`: no map
        try limits.checkRecord(snapshot)
        try limits.checkRecordCount(datastore.recordCount + 1, datastore: datastore.id)
        try limits.checkDatastoreSize(datastore.sizeBytes + SizeAccounting.recordSize(snapshot), datastore: datastore.id)
        let prior = Dictionary(uniqueKeysWithValues: fields.keys.map { ($0, Value?.none) })
        return .write(
            snapshot: snapshot, deleted: false,
            operation: OperationRecord(version: version, change: mutation.change, priorValues: prior, origin: origin),
            merges: [])
    }

    /// A change with no base version over an object that the same caller created and someone
    /// else then deleted: the change was made on the caller's own creation (its answer was lost,
    /// or the creation was acknowledged in an earlier push), so it is concurrent with the delete
    /// and loses to it like any change based on a version from before the delete, instead of
    /// re-creating the object with only its own fields. `incarnation` is the deleted
    /// incarnation's history (``ObjectWriteContext/concurrentChanges`` for a write with no base).
    /// `nil` when the rule does not apply: a deliberate re-creation after the caller's own delete,
    /// an object someone else created, or a history that is not complete.
    private func lostToDelete(_ tombstone: StoredObject, incarnation: [OperationRecord]) throws(RooftopError)
        -> ObjectWriteDecision?
    {
        guard mutation.baseVersion == nil, chain == nil, let mine = ObjectService.originScope(origin),
            let creation = incarnation.first, let delete = incarnation.last, incarnation.count > 1,
            delete.version == tombstone.snapshot.version, case .delete = delete.change,
            ObjectService.originScope(creation.origin) == mine, ObjectService.originScope(delete.origin) != mine
        else { return nil }
        let others = Array(incarnation.dropFirst())
        let merged = try ObjectMerge.rebase(
            local: [mutation.change], over: others.map(\.change),
            base: OperationRecord.fields(before: others, current: tombstone.snapshot.fields),
            className: mutation.className, rules: rules)
        return .unchanged(version: tombstone.snapshot.version, object: nil, merges: merged.decisions)
    }

    /// Updating a live object, merging with changes committed since the mutation's base version.
    private func update(
        _ current: ObjectSnapshot, inputs: MergeInputs, concurrent: [OperationRecord], datastore: DatastoreRecord
    ) throws(RooftopError) -> ObjectWriteDecision {
        var change = mutation.change
        var merges: [MergeDecision] = []
        if !inputs.remote.isEmpty {
            let merged = try rebase(current: current, inputs: inputs, concurrent: concurrent)
            merges = merged.decisions
            guard let rebased = merged.change else {
                return .unchanged(version: current.version, object: current, merges: merges)
            }
            change = rebased
        }
        if case .delete = change { return deletion(of: current, merges: merges) }
        guard let applied = try current.applying(change) else { return deletion(of: current) }
        var snapshot = applied
        snapshot.version = current.version + 1
        snapshot.updatedAt = now
        var fieldVersions = current.fieldVersions ?? current.fields.mapValues { _ in current.version }
        let touched = Set(change.updates.map(\.field))
        for field in touched { fieldVersions[field] = snapshot.fields[field] == nil ? nil : snapshot.version }
        snapshot.fieldVersions = ObjectSnapshot.fieldVersions(
            fieldVersions, fields: snapshot.fields, version: snapshot.version)
        try limits.checkRecord(snapshot)
        let growth = SizeAccounting.recordSize(snapshot) - SizeAccounting.recordSize(current)
        if growth > 0 { try limits.checkDatastoreSize(datastore.sizeBytes + growth, datastore: datastore.id) }
        let prior = Dictionary(uniqueKeysWithValues: touched.map { ($0, current.fields[$0]) })
        return .write(
            snapshot: snapshot, deleted: false,
            operation: OperationRecord(version: snapshot.version, change: change, priorValues: prior, origin: origin),
            merges: merges)
    }
}
