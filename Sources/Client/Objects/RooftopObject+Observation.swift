import RooftopShared

extension RooftopObject {
    /// The object's state over time: how it reads now first, then its new state whenever it
    /// changes — a commit of the local datastore (a queued change, a sync, a save or fetch of a
    /// stored object) or a change of the live object itself (an unsaved change, a revert, a
    /// fetched state). Repeated states are not yielded twice; a slow consumer gets the newest.
    ///
    /// `nil` means the object does not exist locally: deleted (a queued or pulled deletion,
    /// ``delete()``, a removal by query), or new and never given a field. The stream ends when
    /// the iterating task stops or the client shuts down.
    ///
    /// ```swift
    /// for await state in score.changes {
    ///     label.text = state.map { "\($0["score"] ?? .null)" } ?? "deleted"
    /// }
    /// ```
    public var changes: AsyncStream<ObjectSnapshot?> {
        let key = self.key
        return ObservationStream.make(
            core: core,
            isRelevant: { $0.objects.contains(key) },
            read: { [self] () throws(RooftopError) -> ObjectSnapshot? in try localState() },
            identity: { $0 })
    }

    /// How the object reads now, `nil` when it does not exist locally.
    func localState() throws(RooftopError) -> ObjectSnapshot? {
        let row = try core.store.object(key, scope: core.scope)
        if row?.deleted == true { return nil }
        let current = row.flatMap(core.localState(of:)) ?? snapshot
        if row == nil, current.version == 0, current.fields.isEmpty, !hasUnsavedChanges { return nil }
        return current
    }

    /// Tells observers that the object's live state changed.
    func announceEdit() {
        core.registry.noteEdited(key)
        core.edits.publish(StoreChange(objects: [key], datastores: [key.datastore]))
    }
}
