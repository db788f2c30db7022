import Foundation
import Logging
import RooftopShared
import Synchronization

/// An object of the app's data: one live instance per object for the whole client (as in Parse's local datastore), with
/// its unsaved changes tracked as field operations.
///
/// Read fields with the subscript or the typed accessors; change them with the subscript setter or
/// the operation methods (increment, list and relation operations). Changes stay local and
/// unsaved until ``save()`` (network now) or ``saveEventually()`` (durably queued, sent when
/// possible).
///
/// ```swift
/// let score = client.object("GameScore")
/// score["score"] = 1337
/// score["playerName"] = "Sean Plott"
/// try score.increment("plays")
/// try await score.saveEventually()
/// ```
public final class RooftopObject: Sendable, Identifiable, CustomStringConvertible, ValueConvertible {
    /// Which object this is.
    public let key: ObjectKey
    let core: ClientCore
    private let state: Mutex<State>

    struct State {
        /// The stored (or fetched) state the unsaved changes apply on; nil for a new object.
        /// Decoded from its stored text when first read, for an instance a local query made
        /// from its stored row (``init(key:storedText:core:)``).
        var base: ObjectSnapshot? {
            mutating get {
                switch stored {
                case .decoded(let base): return base
                case .text(let text, let key):
                    let base: ObjectSnapshot?
                    do {
                        base = try StoredForm.snapshot(of: key, from: text)
                    } catch {
                        // Our own text that no longer reads (the file was damaged): said, and this
                        // instance reads as a new object. The query that made it answered with
                        // it; the next ones find it live and decode its row again, failing with
                        // `cache` as queries did before they read pages undecoded.
                        ClientCore.logger.error(
                            "a stored object could not be read; its instance starts empty",
                            metadata: ["object": "\(key)", "error": "\(error)"])
                        base = nil
                    }
                    stored = .decoded(base)
                    return base
                }
            }
            set { stored = .decoded(newValue) }
        }
        /// ``base`` or the text it is decoded from.
        private var stored: StoredBase
        /// Whether ``base`` is decoded (tests).
        var isBaseDecoded: Bool {
            if case .decoded = stored { return true }
            return false
        }
        /// Field changes not saved yet, in order.
        var unsaved: [FieldUpdate] = []
        /// An ACL set and not saved yet.
        var unsavedACL: ACL?
        /// The mutation ID of an unfinished ``save()``, reused when the same changes are saved
        /// again so that a retry after a lost answer never applies twice.
        var saveAttempt: (id: MutationID, count: Int)?
        /// Deleted (by a delete, or on the server: a pulled tombstone, lost access).
        var deleted = false
        /// The objects the last fetch with include paths brought (``refresh(including:)``, a
        /// `getObject` with includes), shared by every object they reach, so that
        /// ``object(_:)`` finds them with their fields when nothing else holds them.
        var included: [ObjectKey: ObjectSnapshot] = [:]

        init(base: ObjectSnapshot?, unsaved: [FieldUpdate], unsavedACL: ACL?) {
            stored = .decoded(base)
            self.unsaved = unsaved
            self.unsavedACL = unsavedACL
        }

        init(storedText: String, of key: ObjectKey) {
            stored = .text(storedText, key)
        }
    }

    /// The stored state, or its stored text not decoded yet.
    private enum StoredBase {
        case decoded(ObjectSnapshot?)
        case text(String, ObjectKey)
    }

    init(
        key: ObjectKey, base: ObjectSnapshot?, unsaved: [FieldUpdate] = [], unsavedACL: ACL? = nil, core: ClientCore
    ) {
        self.key = key
        self.core = core
        self.state = Mutex(State(base: base, unsaved: unsaved, unsavedACL: unsavedACL))
    }

    /// The instance of an object stored as `storedText` with nothing unsaved, which it decodes
    /// when one of its fields, versions or dates is first read.
    init(key: ObjectKey, storedText: String, core: ClientCore) {
        self.key = key
        self.core = core
        self.state = Mutex(State(storedText: storedText, of: key))
    }

    deinit {
        // Its entry in the registry, if it had one, goes with it.
        core.registry.forget(key)
    }

    /// The object's ID (stable: client-generated for new objects).
    public var id: String { key.objectId }
    /// The object's class.
    public var className: String { key.className }
    /// The object's ID.
    public var objectId: String { key.objectId }
    /// The datastore that holds it.
    public var datastore: DatastoreID { key.datastore }

    /// The object as it reads now: its stored state with the unsaved changes applied. An unsaved
    /// change that does not apply (it was checked when made, but the stored state changed since)
    /// is left out.
    public var snapshot: ObjectSnapshot {
        state.withLock { state in
            var snapshot = state.base ?? ObjectSnapshot(
                className: key.className, objectId: key.objectId, datastore: key.datastore)
            for update in state.unsaved {
                if let fields = try? update.apply(to: snapshot.fields) { snapshot.fields = fields }
            }
            if let acl = state.unsavedACL { snapshot.acl = acl }
            return snapshot
        }
    }

    /// The server version of the stored state (0 for an object never saved).
    public var version: Int64 { state.withLock { $0.base?.version ?? 0 } }
    /// When the server first stored the object.
    public var createdAt: Timestamp? { state.withLock { $0.base?.createdAt } }
    /// When the server last changed the object.
    public var updatedAt: Timestamp? { state.withLock { $0.base?.updatedAt } }
    /// Whether there are changes not saved (nor queued) yet.
    public var hasUnsavedChanges: Bool { state.withLock { !$0.unsaved.isEmpty || $0.unsavedACL != nil } }

    /// A field's value (built-in fields `objectId`, `createdAt`, `updatedAt` included); setting
    /// records a `set` (or, with `nil`, an `unset`) to save later.
    ///
    /// The setter cannot throw, so it does not check the field name: an invalid or built-in name
    /// (`"a b"`, `"objectId"`) is refused when the change is saved — ``save()`` and
    /// ``saveEventually()`` throw `illegalArgument` or `invalidOperation` and queue nothing. Use
    /// ``set(_:to:)`` to have it checked at once.
    public subscript(field: String) -> Value? {
        get { snapshot[field] }
        set { record(FieldUpdate(field, newValue.map(FieldOperation.set) ?? .unset)) }
    }

    /// A field's value as a Swift type, `nil` when the field is absent or holds another kind;
    /// setting records a `set` of the value (or, with `nil`, an `unset`) to save later, unchecked
    /// as with the `Value` subscript.
    ///
    /// ```swift
    /// object["plays"] = plays                 // an Int variable
    /// object["lastPlayed"] = Date()
    /// let plays: Int? = object["plays"]
    /// ```
    public subscript<T: LosslessValueConvertible>(field: String) -> T? {
        get { snapshot[field].flatMap(T.init(rooftopValue:)) }
        set { record(FieldUpdate(field, newValue.map { .set($0.rooftopValue) } ?? .unset)) }
    }

    /// A pointer field as the object it points to; setting it to an object records a `set` of a
    /// pointer to that object (or, with `nil`, an `unset`) to save later, unchecked as with the
    /// `Value` subscript.
    ///
    /// ```swift
    /// post["author"] = user                   // a pointer to another object
    /// let author: RooftopObject? = post["author"]
    /// ```
    ///
    /// Reading gives what ``object(_:)`` gives (`nil` when the field is absent or not a pointer);
    /// when the local store cannot be read, an object that is not loaded yet (the failure is
    /// logged): call ``object(_:)`` to have it thrown.
    @_disfavoredOverload
    public subscript(field: String) -> RooftopObject? {
        get {
            guard let pointer = snapshot[field]?.pointerValue else { return nil }
            do {
                return try object(field)
            } catch {
                return core.objectOrUnloaded(
                    for: ObjectKey(datastore: datastore, className: pointer.className, objectId: pointer.objectId))
            }
        }
        set { record(FieldUpdate(field, newValue.map { .set($0.rooftopValue) } ?? .unset)) }
    }

    /// Sets a field, checking now that the name is valid and writable.
    ///
    /// ```swift
    /// try object.set("score", to: score)
    /// try object.set("author", to: user)      // a pointer to another object
    /// ```
    /// - Throws: `illegalArgument` for an invalid field name, `invalidOperation` for a built-in one.
    public func set(_ field: String, to value: some ValueConvertible) throws {
        try apply(FieldUpdate(field, .set(value.rooftopValue)))
    }

    /// Removes a field, checking the name now.
    /// - Throws: `illegalArgument` for an invalid field name, `invalidOperation` for a built-in one.
    public func unset(_ field: String) throws {
        try apply(FieldUpdate(field, .unset))
    }

    /// The object's ACL, as it reads now; setting it records the change to save later.
    public var acl: ACL? {
        get { snapshot.acl }
        set {
            state.withLock { $0.unsavedACL = newValue ?? ACL() }
            announceEdit()
        }
    }

    /// A pointer to the object: storing an object in a field stores a pointer to it.
    public var rooftopValue: Value { .pointer(Pointer(className: className, objectId: objectId)) }

    /// `ClassName/objectId` and the current fields.
    public var description: String { "\(key): \(snapshot.fields)" }

    // MARK: Changes

    /// Records an operation after checking that it applies to the object as it reads now.
    /// - Throws: What applying it throws: `badType` (e.g. incrementing a string), `badIndex`,
    ///   `illegalArgument` / `invalidOperation` for a bad or built-in field name.
    public func apply(_ update: FieldUpdate) throws {
        _ = try update.apply(to: snapshot.fields)
        record(update)
    }

    /// Forgets the unsaved changes.
    public func revert() {
        state.withLock { state in
            state.unsaved = []
            state.unsavedACL = nil
            state.saveAttempt = nil
        }
        announceEdit()
    }

    private func record(_ update: FieldUpdate) {
        state.withLock { state in
            state.unsaved.append(update)
            state.saveAttempt = nil
        }
        announceEdit()
    }

    // MARK: Pointers

    /// The object a pointer field points to (its live instance, loaded from the local store when
    /// there; fetch it to get its fields when it is not).
    public func object(_ field: String) throws -> RooftopObject? {
        guard let pointer = self[field]?.pointerValue else { return nil }
        let key = ObjectKey(datastore: datastore, className: pointer.className, objectId: pointer.objectId)
        let included = state.withLock { $0.included }
        guard let fetched = included[key] else { return try core.object(for: key) }
        let object = try core.object(for: key, fetched: fetched)
        // The included object reaches the rest of the same fetch's includes (`a.b` paths).
        object.keepIncluded(included)
        return object
    }

    // MARK: Internal state

    /// Replaces the stored state the unsaved changes apply on.
    func replaceBase(_ snapshot: ObjectSnapshot?) {
        let changed = state.withLock { state in
            defer {
                state.base = snapshot
                if snapshot != nil { state.deleted = false }
            }
            return state.base != snapshot
        }
        // Queries re-read objects into the identity map all the time: only real changes count.
        if changed { announceEdit() }
    }

    /// Whether the object was deleted: by ``delete()`` or ``deleteEventually()``, or on the
    /// server (a sync brought its tombstone, or the user lost access to it). A deleted object
    /// reads no fields; saving changes to it creates it again.
    public var isDeleted: Bool { state.withLock { $0.deleted } }

    /// Whether the stored state is decoded: an instance a local query made from its stored text
    /// decodes it when first read (tests).
    var isBaseDecoded: Bool { state.withLock { $0.isBaseDecoded } }

    /// The stored (or fetched) state, without the unsaved changes.
    var storedBase: ObjectSnapshot? { state.withLock { $0.base } }

    /// Keeps the objects a fetch with include paths brought (see ``State/included``); an
    /// existing map is extended, so objects reached through several fetches keep all of them.
    func keepIncluded(_ included: [ObjectKey: ObjectSnapshot]) {
        guard !included.isEmpty else { return }
        state.withLock { state in state.included.merge(included) { _, newer in newer } }
    }

    /// Records that the object is gone: no stored state, marked deleted.
    func markDeleted() {
        let changed = state.withLock { state in
            defer {
                state.base = nil
                state.deleted = true
            }
            return state.base != nil || !state.deleted
        }
        if changed { announceEdit() }
    }

    /// The unsaved changes as one change, the number of field updates it holds, and the mutation
    /// ID to use when saving it now.
    func pendingChange() -> (change: ObjectChange, count: Int, saveID: MutationID)? {
        state.withLock { state in
            guard !state.unsaved.isEmpty || state.unsavedACL != nil else { return nil }
            let count = state.unsaved.count
            let id: MutationID
            if let attempt = state.saveAttempt, attempt.count == count {
                id = attempt.id
            } else {
                id = MutationID.generate()
                state.saveAttempt = (id, count)
            }
            return (.update(ordering: state.unsaved, acl: state.unsavedACL), count, id)
        }
    }

    /// Checks the names of the unsaved changes' fields (the subscript setter cannot throw).
    /// - Throws: What `FieldUpdate/validateField(_:)` throws for the first bad name.
    func validateUnsavedFields() throws(RooftopError) {
        let names = state.withLock { state in state.unsaved.map(\.field) }
        var checked: Set<String> = []
        for name in names where checked.insert(name).inserted { try FieldUpdate.validateField(name) }
    }

    /// Drops the first `count` unsaved updates (they were saved or queued) and the unsaved ACL.
    func clearSaved(count: Int, base: ObjectSnapshot?) {
        state.withLock { state in
            state.unsaved.removeFirst(min(count, state.unsaved.count))
            state.unsavedACL = nil
            state.saveAttempt = nil
            state.base = base
            if base != nil { state.deleted = false }
        }
        announceEdit()
    }
}
