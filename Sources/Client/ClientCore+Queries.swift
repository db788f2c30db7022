import RooftopShared

extension ClientCore {
    /// The live instance for a state read from the server or the store, its base replaced by
    /// `snapshot` unless the instance already holds a newer server version (a save or fetch that
    /// finished while this answer was on its way must not be rolled back).
    func adopt(_ snapshot: ObjectSnapshot) -> RooftopObject {
        let key = ObjectKey(snapshot)
        let object = registry.instance(for: key) { RooftopObject(key: key, base: snapshot, core: self) }
        if snapshot.version >= object.version { object.replaceBase(snapshot) }
        return object
    }

    /// The live instance for a stored object, made from its stored local view when there is
    /// none. An existing instance is left as it is: whatever changes a stored object updates its
    /// live instance too (saves, fetches, queued changes, pulls), and the instance also carries
    /// the unsaved changes.
    func instance(for row: LocalObjectRow) -> RooftopObject {
        restoredInstance(row)
    }

    /// The live instances of stored rows, in order, each made from its row when it has none
    /// (from its stored text, decoded when first read, when nothing is queued for it);
    /// `nil` when one reads otherwise than its stored view (``localState(of:)``: it has unsaved
    /// changes, or lags behind a write just committed). One registry lookup per row.
    /// - Throws: `cache` when the stored text of an object with a live instance, or with queued
    ///   changes, is not an object.
    func instancesReadingAsStored(_ rows: [StoredObjectRow]) throws(RooftopError) -> [RooftopObject]? {
        var objects: [RooftopObject] = []
        objects.reserveCapacity(rows.count)
        for row in rows {
            // The instance made here from the row's text, if this row makes one.
            var made: RooftopObject?
            let object: RooftopObject
            if row.localIsServer, !row.deleted, let text = row.server {
                // The live instance, or one made from this view with nothing unsaved
                // (``madeInstance(_:)``): one look-up.
                object = registry.instance(for: row.key) {
                    let fresh = RooftopObject(key: row.key, storedText: text, core: self)
                    made = fresh
                    return fresh
                }
            } else if let live = registry.existing(row.key) {
                object = live
            } else {
                objects.append(madeInstance(try row.decoded()))
                continue
            }
            // A live instance (one another task made meanwhile included) is judged as it reads.
            if object !== made {
                let decoded = try row.decoded()
                guard state(of: object, storedAs: decoded) == decoded.local else { return nil }
            }
            objects.append(object)
        }
        return objects
    }

    /// How an object reads for local queries: its live instance's state (stored state plus
    /// unsaved changes, as in Parse's local datastore) when there is one, otherwise its stored local view.
    func localState(of row: LocalObjectRow) -> ObjectSnapshot? {
        guard let live = registry.existing(row.key) else { return row.local }
        return state(of: live, storedAs: row)
    }

    /// How `live`, the instance of the object stored as `row`, reads for local queries.
    private func state(of live: RooftopObject, storedAs row: LocalObjectRow) -> ObjectSnapshot? {
        // A safety net for the contract above: a stored view of a newer server version than the
        // instance's (a pull that did not reach it) becomes its base.
        if let local = row.local, local.version > live.version { live.replaceBase(local) }
        return live.snapshot
    }

    /// Whether the current user may read an object, as far as the client knows: its ACL against
    /// the user and their cached effective roles (an object without an ACL is public).
    func canRead(_ snapshot: ObjectSnapshot) -> Bool {
        ACL.allowsRead(snapshot.acl, for: accessContext)
    }

    /// Records objects the server returned: the copies of stored objects get the new server
    /// state (their local views keep the queued changes on top), and with `storingAs`, every
    /// object is stored and pinned with that label. Returns each object's local view (the
    /// server's state for objects not stored); `nil` for an object deleted locally.
    func record(
        _ objects: [ObjectSnapshot], storingAs label: String? = nil, in transaction: StoreTransaction
    ) throws -> [ObjectKey: ObjectSnapshot?] {
        var views: [ObjectKey: ObjectSnapshot?] = [:]
        for snapshot in objects {
            let key = ObjectKey(snapshot)
            if let label { try transaction.pin(key, label: label) }
            let stored = try label != nil || transaction.object(key) != nil
            if stored {
                views[key] = .some(try transaction.recomputeLocalView(key, server: snapshot))
            } else {
                views[key] = .some(snapshot)
            }
        }
        return views
    }
}
