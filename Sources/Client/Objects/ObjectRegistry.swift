import Synchronization

/// One live ``RooftopObject`` per object (as in Parse's local datastore: with the local datastore enabled there is only
/// one instance of any given object). Instances are held weakly: when the app lets go of every
/// reference, the next lookup makes a new one from the stored state.
final class ObjectRegistry: Sendable {
    private struct WeakObject: @unchecked Sendable {
        // Sendable because RooftopObject is, and the box is only read under the registry's lock.
        weak var object: RooftopObject?
    }

    private let objects = Mutex<[ObjectKey: WeakObject]>([:])

    /// The live instance for `key`, made by `make` when there is none.
    func instance(for key: ObjectKey, make: () -> RooftopObject) -> RooftopObject {
        objects.withLock { objects in
            if let existing = objects[key]?.object { return existing }
            let made = make()
            objects[key] = WeakObject(object: made)
            if objects.count > 1024, objects.count.isMultiple(of: 1024) {
                objects = objects.filter { $0.value.object != nil }
            }
            return made
        }
    }

    /// The live instance for `key`, if one exists.
    func existing(_ key: ObjectKey) -> RooftopObject? {
        objects.withLock { $0[key]?.object }
    }

    /// Forgets every instance, so that the next lookups make new ones from the stored state:
    /// the signed-in user changed, and one user's live objects (their fields, their unsaved
    /// changes) must not be handed to another. Instances the app still holds keep their state,
    /// detached from the identity map.
    func removeAll() {
        objects.withLock { $0.removeAll() }
    }

    /// Every live instance (to apply their unsaved changes to local queries).
    func all() -> [RooftopObject] {
        objects.withLock { $0.values.compactMap(\.object) }
    }
}
