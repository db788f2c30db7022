import Logging
import RooftopShared
import Synchronization

/// An open datastore (as in the Dropbox Datastore API): the unit of sync and sharing.
///
/// Objects of a datastore are ordinary ``RooftopObject``s whose `datastore` is this one; save them
/// with `saveEventually()`. ``sync(scope:)`` sends the datastore's queued changes and pulls the remote
/// ones.
///
/// ```swift
/// let settings = try await client.datastores.open(.default)
/// let theme = settings.object("Preference", id: "theme")
/// theme["value"] = "dark"
/// try await theme.saveEventually()
/// let changed = try await settings.sync()        // ["Preference": [...]] changed remotely
/// for await status in settings.status { print(status.outgoing, status.lastError as Any) }
/// ```
public struct Datastore: Sendable {
    /// The datastore's ID.
    public let id: DatastoreID
    let core: ClientCore

    /// What is known of the datastore locally (title, owner, role), if anything.
    /// - Throws: `cache`.
    public func info() throws -> DatastoreInfo? {
        try core.store.datastores(scope: core.scope).first { $0.id == id }
    }

    /// The object of this datastore with this ID (loaded from the local store when there), or a
    /// new one.
    public func object(_ className: String, id objectId: String? = nil) -> RooftopObject {
        let key = ObjectKey(datastore: id, className: className, objectId: objectId ?? ObjectID.generate())
        return core.objectOrUnloaded(for: key)
    }

    /// The stored objects of a class (their local views), optionally those matching a predicate
    /// — a thin convenience; queries offer ordering, paging and unsaved changes.
    /// - Throws: `cache`.
    public func objects(_ className: String, matching predicate: QueryPredicate? = nil) throws
        -> [RooftopObject]
    {
        var objects: [RooftopObject] = []
        for row in try core.store.objects(scope: core.scope, datastore: id, className: className) {
            guard let local = row.local, predicate.map({ QueryEvaluator.matches(local, $0) }) ?? true else { continue }
            objects.append(try core.object(for: row.key))
        }
        return objects
    }

    /// Sends the datastore's queued changes, then pulls its remote changes (rebasing unsent
    /// changes with the merge rules), and returns the objects the remote changes touched, by
    /// class. Deleted ones are included, with ``RooftopObject/isDeleted`` set and no fields.
    ///
    /// Without an account there is no server to talk to: the changes stay queued (for the
    /// account the user signs in to) and the result is empty.
    /// - Parameter scope: What to keep in sync (default `nil`: as last time, or everything).
    /// - Throws: Network errors (the changes stay queued), `notFound` when the server no longer
    ///   has the datastore (its local copy is dropped; the status says `needsReset`).
    @discardableResult
    public func sync(scope: SyncScope? = nil) async throws -> [String: [RooftopObject]] {
        guard !core.scope.isEmpty else { return [:] }
        let engine = core.syncEngine
        try await engine.push(datastore: id)
        let touched = TouchedKeys()
        _ = try await engine.pull(datastore: id, scope: scope, maxRetries: 0, progress: nil, onChange: { touched.record($0, deleted: $1) })
        var result: [String: [RooftopObject]] = [:]
        for (key, deleted) in touched.all {
            let object = try core.object(for: key)
            if deleted { object.markDeleted() }
            result[key.className, default: []].append(object)
        }
        return result
    }

    /// The status now.
    /// - Throws: `cache`.
    public func currentStatus() throws -> DatastoreStatus {
        let owner = core.scope
        let queue = try core.store.queueState(scope: owner, datastore: id)
        let activity = core.services.activity
        let entry = activity.entry(id)
        let pulled = try core.store.checkpoint(scope: owner, datastore: id) != nil
        return DatastoreStatus(
            connected: activity.connected, subscribed: entry.subscribed, downloading: entry.pulls > 0 || (!pulled && !entry.needsReset),
            uploading: queue.sent > 0, incoming: entry.incoming, outgoing: queue.queued > 0,
            needsReset: entry.needsReset, lastError: entry.lastError)
    }

    /// The status now, then each time it changes (as the queue, pulls and the connection move).
    public var status: AsyncStream<DatastoreStatus> {
        let datastore = self
        return AsyncStream { continuation in
            let task = Task {
                let storeChanges = datastore.core.store.changes.stream()
                let activityChanges = datastore.core.services.activity.changes.stream()
                let (triggers, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                let forwarders = [
                    Task {
                        for await change in storeChanges where change.outbox || change.datastores.contains(datastore.id) {
                            trigger.yield()
                        }
                        trigger.finish()
                    },
                    Task {
                        for await changed in activityChanges where changed == nil || changed == datastore.id {
                            trigger.yield()
                        }
                        trigger.finish()
                    },
                ]
                var last: DatastoreStatus?
                func emit() {
                    let status: DatastoreStatus
                    do {
                        status = try datastore.currentStatus()
                    } catch {
                        ClientCore.logger.error(
                            "the datastore's status could not be read; its next change reads again",
                            metadata: ["datastore": "\(datastore.id)", "error": "\(error)"])
                        return
                    }
                    guard status != last else { return }
                    last = status
                    continuation.yield(status)
                }
                emit()
                for await _ in triggers { emit() }
                for forwarder in forwarders { forwarder.cancel() }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// The objects a pull touched, in order, each once (the last word on deletion wins).
final class TouchedKeys: Sendable {
    private let state = Mutex<(order: [ObjectKey], deleted: [ObjectKey: Bool])>(([], [:]))

    /// Records a touched object.
    func record(_ key: ObjectKey, deleted: Bool) {
        state.withLock { state in
            if state.deleted.updateValue(deleted, forKey: key) == nil { state.order.append(key) }
        }
    }

    /// Every touched object, in the order first touched.
    var all: [(ObjectKey, Bool)] {
        state.withLock { state in state.order.map { ($0, state.deleted[$0] ?? false) } }
    }
}
