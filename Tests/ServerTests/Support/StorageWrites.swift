import RooftopShared
import Testing

@testable import RooftopServer

/// Writes test objects through ``ObjectStorage/writeObject(_:decide:)`` as the server does, with a
/// `decide` that stores a given state.
enum StorageWrites {
    /// Why a test write did not go as planned.
    struct Unexpected: Error, CustomStringConvertible {
        var description: String
    }

    /// Stores `snapshot` as the object's next state (a tombstone when `deleted`), after checking
    /// that the stored version is `snapshot.version - 1` (0: the object does not exist).
    /// - Returns: the stored object the storage reports.
    /// - Throws: ``Unexpected`` when the write was not committed.
    @discardableResult
    static func put(
        _ snapshot: ObjectSnapshot, deleted: Bool = false, datastoreKey: Int64, into storage: any Storage
    ) async throws -> StoredObject {
        let request = ObjectWriteRequest(
            datastoreKey: datastoreKey, className: snapshot.className, objectId: snapshot.objectId,
            baseVersion: snapshot.version - 1, mutation: nil)
        let outcome = try await storage.writeObject(request) { context throws(RooftopError) in
            let stored = context.current?.snapshot.version ?? 0
            guard stored == snapshot.version - 1 else {
                throw RooftopError(.internal, "expected version \(snapshot.version - 1) stored, found \(stored)")
            }
            return decision(snapshot, deleted: deleted)
        }
        guard case .written(let stored, _, _) = outcome else {
            throw Unexpected(description: "writing \(snapshot.pointer) v\(snapshot.version) gave \(outcome)")
        }
        return stored
    }

    /// The `.write` decision that stores `snapshot`, with an operation record describing it.
    static func decision(_ snapshot: ObjectSnapshot, deleted: Bool) -> ObjectWriteDecision {
        let change: ObjectChange =
            deleted
            ? .delete
            : .update(
                snapshot.fields.keys.sorted().compactMap { field in
                    snapshot.fields[field].map { FieldUpdate(field, .set($0)) }
                }, acl: snapshot.acl)
        return .write(
            snapshot: snapshot, deleted: deleted,
            operation: OperationRecord(version: snapshot.version, change: change, priorValues: [:]), merges: [])
    }

    /// The tombstone that deleting `snapshot` leaves: no fields, the next version, the ACL kept.
    static func tombstone(of snapshot: ObjectSnapshot, at time: Timestamp? = nil) -> ObjectSnapshot {
        var tombstone = snapshot
        tombstone.fields = [:]
        tombstone.fieldVersions = nil
        tombstone.version = snapshot.version + 1
        tombstone.updatedAt = time ?? snapshot.updatedAt
        return tombstone
    }
}
