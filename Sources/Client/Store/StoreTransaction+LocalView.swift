import GRDB
import Logging
import RooftopShared

/// The local view's upkeep: an object's server state and the view the app reads (the server state
/// with the queued changes on top, ``LocalView``) are written together, in the caller's
/// transaction.
extension StoreTransaction {
    /// Recomputes an object's local view from its server state and queued mutations; returns the
    /// view. `synced`: pins it with ``LocalStore/syncLabel`` too (in the same write, before its
    /// pending label may go).
    /// - Throws: The store's errors.
    /// `previous`: as for ``storeLocalView(_:server:queued:fresh:synced:prepared:previous:)``.
    @discardableResult
    func recomputeLocalView(
        _ key: ObjectKey, server: ObjectSnapshot?, synced: Bool = false, previous: ObjectSnapshot? = nil
    ) throws -> ObjectSnapshot? {
        try storeLocalView(key, server: server, queued: try queued(for: key).map(\.mutation), synced: synced, previous: previous)
    }

    /// Stores a pulled server state of an object with nothing queued, which is then also its
    /// local view: what ``recomputeLocalView(_:server:synced:)`` does, without looking for queued
    /// changes (the caller knows there are none) and, for an object not stored before
    /// (`fresh`), without replacing index rows or a pending label it cannot have.
    /// - Throws: The store's errors.
    /// `prepared`, when given, is `server`'s preparation (``PreparedObject``).
    func storeUnqueued(
        _ key: ObjectKey, server: ObjectSnapshot, fresh: Bool, synced: Bool, prepared: PreparedObject? = nil
    ) throws -> ObjectSnapshot? {
        try storeLocalView(key, server: server, queued: [], fresh: fresh, synced: synced, prepared: prepared)
    }

    /// Stores an object's server state and its local view with `queued` (the object's queued
    /// mutations, in order, as the caller has just read or written them) on top, pinned with the
    /// sync label too when `synced`; without queued changes it no longer has the pending label,
    /// and goes when nothing else keeps it (a `fresh` object, not stored before, is kept). Returns the view.
    /// - Throws: The store's errors.
    /// `prepared`, when given, is `server`'s preparation (``PreparedObject``), used when nothing
    /// is queued (the view is then the server state). `previous`, when given, is the object's
    /// stored view, not deleted, as the caller read it in this transaction (its index rows are
    /// updated from it: ``put(_:server:local:deleted:fresh:synced:prepared:previous:)``).
    func storeLocalView(
        _ key: ObjectKey, server: ObjectSnapshot?, queued: [Mutation], fresh: Bool = false, synced: Bool = false,
        prepared: PreparedObject? = nil, previous: ObjectSnapshot? = nil
    ) throws -> ObjectSnapshot? {
        let local = LocalView.compute(key: key, server: server, queued: queued)
        let (view, deleted) = (local.view, local.deleted)
        for (mutation, error) in local.takeUnsaid() {
            ClientCore.logger.notice(
                "a queued change no longer applies to its object and is left out of its local view; the server will refuse it",
                metadata: ["object": "\(key)", "mutation": "\(mutation)", "error": "\(error)"])
        }
        try put(
            key, server: server, local: view, deleted: deleted || (view == nil && server == nil), fresh: fresh,
            synced: synced, prepared: queued.isEmpty ? prepared : nil, previous: previous)
        // Without queued changes it no longer has the pending label (read from the queue): kept
        // only if something else keeps it (the sync label, just written, does).
        if queued.isEmpty, !fresh, !synced { try collectGarbage(key, queueEmpty: true) }
        return view
    }
}

/// What a new live instance of a stored object starts from.
struct RestoredState {
    /// Its base: the server state (the local view when it holds no unsaved changes).
    var base: ObjectSnapshot?
    /// Changes made before the object was pinned and never saved.
    var unsaved: [FieldUpdate]
    /// An ACL set and never saved.
    var acl: ACL?
}

extension LocalStore {
    /// The state of a stored object's new live instance. A local view that differs from the
    /// server state while nothing is queued holds changes made before the object was pinned and
    /// never saved (as in Parse's local datastore: a pinned object keeps its unsaved changes):
    /// they become the instance's unsaved changes again.
    /// - Throws: `cache` when the object or the offline queue cannot be read.
    func restoredState(of row: LocalObjectRow, scope: String) throws(RooftopError) -> RestoredState {
        guard !row.deleted, let local = row.local else { return RestoredState(base: nil, unsaved: [], acl: nil) }
        guard local != row.server else { return RestoredState(base: local, unsaved: [], acl: nil) }
        // The row and whether changes are queued, read together: a change acknowledged since
        // `row` was read would otherwise come back as unsaved, on a stale base.
        let (current, queued) = try read { db in
            let current = try StoreTransaction.object(row.key, scope: scope, db)
            let queued = try Bool.fetchOne(
                db.cachedStatement(
                    sql: "SELECT EXISTS (SELECT 1 FROM outbox WHERE scope = ? AND datastore = ? AND class_name = ?"
                        + " AND object_id = ?)"),
                arguments: [scope, row.key.datastore.rawValue, row.key.className, row.key.objectId])
            return (current, queued ?? false)
        }
        // Gone meanwhile: the instance starts from what was read.
        guard let current else { return RestoredState(base: local, unsaved: [], acl: nil) }
        guard !current.deleted, let view = current.local else { return RestoredState(base: nil, unsaved: [], acl: nil) }
        // With changes queued, the local view is the server state plus those: nothing unsaved.
        guard view != current.server, !queued else { return RestoredState(base: view, unsaved: [], acl: nil) }
        let server = current.server
        var updates: [FieldUpdate] = []
        for (name, value) in view.fields.sorted(by: { $0.key < $1.key }) where server?.fields[name] != value {
            updates.append(FieldUpdate(name, .set(value)))
        }
        for name in (server?.fields.keys.sorted() ?? []) where view.fields[name] == nil {
            updates.append(FieldUpdate(name, .unset))
        }
        return RestoredState(base: server, unsaved: updates, acl: view.acl != server?.acl ? view.acl : nil)
    }
}
