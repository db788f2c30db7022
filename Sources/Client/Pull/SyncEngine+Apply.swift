import Logging
import RooftopShared

extension SyncEngine {
    /// Applies one pull page: first the rebases of unsent queued changes are worked out (they may
    /// need the server: operations since the base version, the class's merge rules), then the
    /// page and its checkpoint are written, then live objects, the queue's statuses and the merge
    /// decisions follow.
    ///
    /// The page is written in one transaction unless another write waits for the writer (a save
    /// during an initial sync): then the transaction ends after the slice of ``sliceSize``
    /// changes under way, the waiting writes go, and the page goes on in another. Only the last
    /// transaction stores the checkpoint, so that a pull interrupted in between pulls the page
    /// again (its objects written before are written again, never older: see below).
    ///
    /// `owner` is the account the page was pulled for: when another is signed in by the time it
    /// is written (a log-out during the pull), nothing more is written and the pull is cancelled.
    ///
    /// `prepared` holds the preparations of the page's pulled objects
    /// (``SyncEngine/prepare(_:objectTexts:valueIndexed:)``), by position, when the caller has
    /// worked them out.
    func apply(
        _ page: PullResponse, prepared: [PreparedObject?] = [], datastore: DatastoreID, scope: SyncScope,
        checkpoint: Checkpoint?, owner: String, onChange: ChangeObserver?
    ) async throws(RooftopError) {
        guard dependencies.scope == owner else { throw SyncEngine.accountChanged }
        let rebases = try await rebases(for: page, datastore: datastore, owner: owner)
        let changes = page.changes
        let registry = dependencies.registry
        let store = dependencies.store
        // What a page brings is the server's, told again from the last checkpoint stored: its
        // commit need not wait for the disk (``Durability``) unless it rewrites queued changes or
        // records a sync scope other than the one stored (the app's choice, which only the device
        // knows: lost, a narrowed scope's next pull would resume from the wide one's checkpoint).
        var newScope = false
        if checkpoint != nil { newScope = try store.syncFilter(scope: owner, datastore: datastore) != scope }
        let durability: Durability = rebases.isEmpty && !newScope ? .deferred : .synced
        var next = 0
        repeat {
            let start = next
            // Off the tasks' threads (``LocalStore/writeLong(scope:durability:_:committed:)``):
            // the next page is fetched and read meanwhile.
            let (end, written) = try await store.writeLong(scope: owner, durability: durability) { transaction in
                guard self.dependencies.scope == owner else { throw SyncEngine.accountChanged }
                // Objects new here share a few keys of each index: their counts are summed and
                // written once, at the end of the transaction (``IndexEntryWriter``).
                transaction.entries.defersCounts = true
                // Read in this transaction: what is queued cannot change under it.
                let queued = try transaction.queuedKeys(in: datastore)
                var written = WrittenChanges()
                var next = start
                repeat {
                    let slice = next..<min(next + SyncEngine.sliceSize, changes.count)
                    try self.write(
                        changes[slice], from: slice.lowerBound, prepared: prepared, rebases: rebases, queued: queued,
                        datastore: datastore, scope: scope, onChange: onChange, into: &written,
                        transaction)
                    next = slice.upperBound
                } while next < changes.count && !store.writesWaiting
                if next == changes.count, let checkpoint {
                    try transaction.setCheckpoint(checkpoint, datastore: datastore)
                    try transaction.setSyncFilter(scope, datastore: datastore)
                }
                return (next, written)
            } committed: { _, written in
                for (key, view) in written.views { registry.existing(key)?.replaceBase(view) }
                for key in written.gone { registry.existing(key)?.markDeleted() }
            }
            next = end
            // Told per transaction: a later one that fails leaves these committed, and their
            // queued rows are gone (a pull again would not bring their acknowledgements back).
            publish(written.outcomes)
        } while next < changes.count
    }

    /// A rebase applied, and what it did.
    typealias RebaseOutcome = (Rebase, Rebase.Outcome)

    /// What one transaction of a page's write did, for after its commit.
    struct WrittenChanges: Sendable {
        /// The objects stored, with their local views.
        var views: [(ObjectKey, ObjectSnapshot?)] = []
        /// The objects removed.
        var gone: [ObjectKey] = []
        var outcomes: [RebaseOutcome] = []
    }

    /// The changes a transaction of ``apply(_:prepared:datastore:scope:checkpoint:owner:onChange:)``
    /// writes before it looks whether another write waits (a save during a sync waits for about
    /// this many; the stored keys are read per slice).
    static let sliceSize = 100

    /// Writes `changes` (at `start` in their page, whose preparations are `prepared`) in
    /// `transaction`, recording what it did in `written`; `queued`: the datastore's objects with
    /// queued changes.
    private func write(
        _ changes: ArraySlice<PullChange>, from start: Int, prepared: [PreparedObject?], rebases: [ObjectKey: Rebase],
        queued: Set<ObjectKey>, datastore: DatastoreID, scope: SyncScope, onChange: ChangeObserver?,
        into written: inout WrittenChanges, _ transaction: StoreTransaction
    ) throws {
        // Which of the objects are stored, in one statement: in an initial sync none is, and each
        // is then written without reading its row first. Kept up to date below, should a page
        // name an object twice.
        var stored = try transaction.storedKeys(
            changes.map { ObjectKey(datastore: datastore, className: $0.className, objectId: $0.objectId) })
        for (position, change) in zip(start..., changes) {
            let key = ObjectKey(datastore: datastore, className: change.className, objectId: change.objectId)
            if let rebase = rebases[key], let outcome = try rebase.apply(in: transaction) {
                SyncEngine.record(outcome, ledger: dependencies.ledger)
                written.outcomes.append((rebase, outcome))
            }
            switch change {
            case .upsert(let object):
                // Queued objects are always read: a rebase above may just have written them.
                let row = stored.contains(key) || queued.contains(key) ? try transaction.object(key) : nil
                var server = object
                var preparation = position < prepared.count ? prepared[position] : nil
                // An acknowledgement may already have stored a newer state: never go back.
                if let current = row?.server, current.version > object.version {
                    server = current
                    preparation = nil
                }
                let keep = scope.keeps(server)
                if !keep, row == nil, !queued.contains(key) { continue }
                let view =
                    queued.contains(key)
                    ? try transaction.recomputeLocalView(key, server: server, synced: keep)
                    : try transaction.storeUnqueued(
                        key, server: server, fresh: row == nil, synced: keep, prepared: preparation)
                stored.insert(key)
                if !keep { try transaction.unpin(key, label: LocalStore.syncLabel) }
                written.views.append((key, view))
            case .tombstone, .removal:
                try transaction.remove(key)
                stored.remove(key)
                written.gone.append(key)
            }
            onChange?(key, !change.isUpsert)
        }
    }

    /// The preparations of a page's pulled objects (``PreparedObject``), by position: what
    /// storing each writes that depends on the object alone, worked out off the writer. `nil`
    /// for a tombstone or a removal, and for an object that cannot be encoded (the write works it
    /// out again, and its error fails the page there).
    /// `objectTexts` are the objects' JSON texts as received, by change
    /// (``RemoteAPI/ReadPage/objectTexts``), stored as they are; an object without one is encoded.
    /// `valueIndexed` are the fields of each class whose rows the store keeps
    /// (``LocalStore/valueIndexedFields(of:)``): only those rows are worked out; a class not
    /// there gets every field's.
    static func prepare(
        _ page: PullResponse, objectTexts: [String?] = [], valueIndexed: [String: Set<String>?] = [:]
    ) -> [PreparedObject?] {
        page.changes.indices.map { index in
            guard case .upsert(let object) = page.changes[index] else { return nil }
            let text = index < objectTexts.count ? objectTexts[index] : nil
            return try? PreparedObject(object, text: text, fields: valueIndexed[object.className] ?? nil)
        }
    }

    /// Logs that an object's queued changes were not rebased over a pulled change, and why.
    private static func notRebased(_ key: ObjectKey, because error: RooftopError) {
        SyncEngine.logger.notice(
            "queued changes not rebased over a pulled change; the server will merge them",
            metadata: ["object": "\(key)", "error": "\(error)"])
    }

    /// Works out the rebases of the page's objects that have unsent queued changes.
    ///
    /// A local store that cannot be read fails the page (it is pulled again later); a server
    /// that cannot tell the operations since a queued change's base or the class's merge rules,
    /// or a merge that fails (a queued change that no longer applies), only leaves that object's
    /// changes un-rebased for now (logged with the reason): the server merges them field by
    /// field when they are pushed, and refuses what does not apply.
    /// - Throws: `cache` when the queue or a stored object cannot be read.
    private func rebases(for page: PullResponse, datastore: DatastoreID, owner: String)
        async throws(RooftopError) -> [ObjectKey: Rebase]
    {
        var rebases: [ObjectKey: Rebase] = [:]
        // One look at the queue per page: most pulled objects have nothing queued.
        let queued = try dependencies.store.queuedKeys(scope: owner, datastore: datastore)
        guard !queued.isEmpty else { return [:] }
        for change in page.changes {
            let key = ObjectKey(datastore: datastore, className: change.className, objectId: change.objectId)
            guard queued.contains(key) else { continue }
            let rows = try dependencies.store.queued(for: key, scope: owner)
            guard let base = Rebase.commonBase(rows) else { continue }
            switch change {
            case .upsert(let object):
                guard object.version > base else { continue }
                do {
                    let records = try await dependencies.api.operations(key, after: base)
                    let rules = try await classes.rules(for: key.className, api: dependencies.api)
                    rebases[key] = try Rebase.over(object, records: records, rows: rows, rules: rules)
                } catch {
                    Self.notRebased(key, because: error)
                }
            case .tombstone(_, _, let version):
                let server = try dependencies.store.object(key, scope: owner)?.server
                do {
                    let rules = try await classes.rules(for: key.className, api: dependencies.api)
                    rebases[key] = try Rebase.overDelete(key: key, version: version, server: server, rows: rows, rules: rules)
                } catch {
                    Self.notRebased(key, because: error)
                }
            case .removal:
                // Access lost: the server will refuse the changes, and they are set aside.
                continue
            }
        }
        return rebases
    }

    /// Records in the ledger the acknowledgements of a rebase that settled the queue, with the
    /// mutations folded earlier into each settled one (inside the page's transaction, so that
    /// statuses read them as soon as the rows go). A fold itself is kept in the store, with the
    /// row folded into (``Rebase/apply(in:)``).
    private static func record(_ outcome: Rebase.Outcome, ledger: OutboxLedger) {
        guard case .settled(let ids, let version, let folded) = outcome else { return }
        for id in ids { ledger.acknowledge(id, version: version, folded: folded[id] ?? []) }
    }

    /// Publishes what the rebases did: merge decisions and local acknowledgements.
    private func publish(_ outcomes: [RebaseOutcome]) {
        for (rebase, outcome) in outcomes {
            for decision in rebase.result.decisions {
                dependencies.merges.publish(MergeEvent(key: rebase.key, decision: decision, source: .rebase))
            }
            switch outcome {
            case .queued:
                break
            case .settled(let ids, let version, let folded):
                let events = outbox.events
                for (index, id) in ids.enumerated() {
                    for other in [id] + (folded[id] ?? []) {
                        let merges = index == 0 && other == id ? rebase.result.decisions : []
                        events.publish(OutboxEvent(
                            mutationId: other, key: rebase.key, kind: .acknowledged(version: version, merges: merges)))
                    }
                }
            }
        }
    }
}

extension SyncEngine {
    /// A pull's pages are not written once another account is signed in.
    static var accountChanged: RooftopError {
        RooftopError(.cancelled, "the pull was cancelled: another account signed in while it ran")
    }
}

extension PullChange {
    /// Whether the change brings the object's state (not a tombstone or a removal).
    var isUpsert: Bool {
        if case .upsert = self { true } else { false }
    }
}
