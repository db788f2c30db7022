import RooftopShared
import Synchronization

/// One live ``RooftopObject`` per object (as in Parse's local datastore: with the local datastore enabled there is only
/// one instance of any given object). Instances are held weakly: when the app lets go of every
/// reference, the next lookup makes a new one from the stored state. An instance leaves the map
/// as it goes (``forget(_:)``, from its `deinit`), so the map holds the live instances only,
/// however many queries made and dropped instances before.
final class ObjectRegistry: Sendable {
    private struct WeakObject: @unchecked Sendable {
        // Sendable because RooftopObject is, and the box is only read under the registry's lock.
        weak var object: RooftopObject?
    }

    private let objects = Mutex<[ObjectKey: WeakObject]>([:])
    /// The keys of instances edited since they last had no unsaved changes, each with the number
    /// of its last edit (a superset: a save or revert leaves its key here until
    /// ``edited(in:className:)`` next looks).
    private let editedKeys = Mutex<(edits: UInt64, keys: [ObjectKey: UInt64])>((0, [:]))

    /// The live instance for `key`, made by `make` when there is none.
    func instance(for key: ObjectKey, make: () -> RooftopObject) -> RooftopObject {
        objects.withLock { objects in
            if let existing = objects[key]?.object { return existing }
            let made = make()
            objects[key] = WeakObject(object: made)
            return made
        }
    }

    /// Removes the entry of `key` if its instance is gone: called by an instance as it goes.
    /// An entry holding another instance (made since, or after ``removeAll()``) stays.
    ///
    /// No instance may be released while the lock is held: its `deinit` would come back here.
    /// Lookups hand the instances they load out; this one keeps what it loaded until the lock
    /// is let go.
    func forget(_ key: ObjectKey) {
        var other: RooftopObject?
        objects.withLock { objects in
            guard let index = objects.index(forKey: key) else { return }
            other = objects.values[index].object
            guard other == nil else { return }
            objects.remove(at: index)
            // A dictionary keeps its largest size: after a large page is let go, its room is
            // given back (copying weak boxes releases no instance).
            if objects.capacity > Self.shrinkFloor, objects.count < objects.capacity / 8 {
                var smaller = [ObjectKey: WeakObject](minimumCapacity: objects.count * 2)
                for (key, box) in objects { smaller[key] = box }
                objects = smaller
            }
        }
        withExtendedLifetime(other) {}
    }

    /// The room below which the map is never made smaller.
    static let shrinkFloor = 4_096

    /// How many entries the map holds (tests: every one a live instance).
    var count: Int { objects.withLock { $0.count } }
    /// How many entries the map has room for (tests).
    var capacity: Int { objects.withLock { $0.capacity } }

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
        editedKeys.withLock { $0.keys.removeAll() }
    }

    /// Every live instance.
    func all() -> [RooftopObject] {
        objects.withLock { $0.values.compactMap(\.object) }
    }

    /// Notes that the instance for `key` was edited (its unsaved changes are looked at by local
    /// queries of its class).
    func noteEdited(_ key: ObjectKey) {
        editedKeys.withLock { edited in
            edited.edits &+= 1
            edited.keys[key] = edited.edits
        }
    }

    /// The live instances of a class in a datastore that have unsaved changes (to apply them to
    /// local queries): only the instances edited since they last had none are looked at, and
    /// those found without unsaved changes are forgotten until edited again. No lock is held
    /// while an instance is looked at.
    func edited(in datastore: DatastoreID, className: String) -> [RooftopObject] {
        let keys = editedKeys.withLock { edited in
            edited.keys.filter { $0.key.datastore == datastore && $0.key.className == className }
        }
        guard !keys.isEmpty else { return [] }
        var found: [RooftopObject] = []
        var clean: [ObjectKey: UInt64] = [:]
        for (key, edit) in keys {
            if let object = existing(key), object.hasUnsavedChanges {
                found.append(object)
            } else {
                clean[key] = edit
            }
        }
        if !clean.isEmpty {
            // A key edited again since it was looked at stays.
            editedKeys.withLock { edited in
                for (key, edit) in clean where edited.keys[key] == edit { edited.keys[key] = nil }
            }
        }
        return found
    }
}
