import Foundation
import RooftopShared

/// What one committed change of the local store touched.
public struct StoreChange: Sendable, Hashable {
    /// The objects whose local view changed (created, updated, deleted, purged).
    public var objects: Set<ObjectKey> = []
    /// The datastores concerned.
    public var datastores: Set<DatastoreID> = []
    /// Whether the offline queue changed (queued, sent, acknowledged, rejected).
    public var outbox = false

    /// Whether nothing changed.
    public var isEmpty: Bool { objects.isEmpty && datastores.isEmpty && !outbox }
}
