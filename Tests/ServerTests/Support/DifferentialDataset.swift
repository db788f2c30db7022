import RooftopShared

@testable import RooftopServer
import RooftopTestSupport

/// A random dataset for the differential tests, written into a storage through
/// ``ObjectStorage/writeObject(_:decide:)``, with the live objects of its main datastore as the
/// evaluator must see them.
///
/// Objects have a random history: created, sometimes updated (new fields and ACL), deleted, or
/// re-created over their tombstone, so the index rows and reader rows of earlier versions must
/// not leak into query answers. A second datastore holds objects with the same classes and IDs,
/// which must never appear either.
struct DifferentialDataset {
    /// The main datastore's storage key.
    var datastoreKey: Int64
    /// The live objects of the main datastore, in their final state.
    var live: [ObjectSnapshot]

    /// Reader sets queries run with: `nil` (an admin) and principal sets as an access context
    /// builds them, which always hold `*`.
    static let readerSets: [Set<String>?] = [
        nil, ["*"], ["*", "u1"], ["*", "u2", "role:R1"], ["*", "u3", "role:R1", "role:R2"],
        ["*", "u1", "u2", "u3", "role:R1", "role:R2"],
    ]

    /// Whether `readers` may read `object`, as the storage's reader filter promises: everything
    /// for `nil`; otherwise an object without an ACL, or one whose ACL lets one of them read.
    static func canRead(_ object: ObjectSnapshot, readers: Set<String>?) -> Bool {
        guard let readers, let acl = object.acl else { return true }
        return readers.contains { text in (try? Principal(text)).map { acl.readAccess(for: $0) } ?? false }
    }

    /// Generates a dataset and writes it into `storage`.
    /// - Parameter objectsPerClass: The most objects of each class in the main datastore.
    static func write(
        into storage: any Storage, using rng: inout SeededGenerator,
        objectsPerClass: [String: Int] = ["T": 24, "U": 8, "V": 5]
    ) async throws -> DifferentialDataset {
        let main = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
        let other = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
        var live: [ObjectSnapshot] = []
        for className in DifferentialValues.classes {
            let ids = Array(
                rng.subset(DifferentialValues.objectIds, percent: 90).prefix(objectsPerClass[className] ?? 0))
            for objectId in ids {
                if let object = try await writeHistory(
                    className: className, objectId: objectId, datastore: main, storage: storage, rng: &rng)
                {
                    live.append(object)
                }
                if rng.chance(25) {
                    _ = try await writeHistory(
                        className: className, objectId: objectId, datastore: other, storage: storage, rng: &rng)
                }
            }
        }
        return DifferentialDataset(datastoreKey: main.key, live: live)
    }

    /// Writes one object's history; returns its final state when it is live.
    private static func writeHistory(
        className: String, objectId: String, datastore: DatastoreRecord, storage: any Storage,
        rng: inout SeededGenerator
    ) async throws -> ObjectSnapshot? {
        var current = DifferentialValues.snapshot(className: className, objectId: objectId, datastore: datastore.id, version: 1, rng: &rng)
        try await StorageWrites.put(current, datastoreKey: datastore.key, into: storage)
        var deleted = false
        for _ in 0..<rng.int(0...3) {
            if !deleted && rng.chance(30) {
                current = StorageWrites.tombstone(of: current)
                deleted = true
            } else {
                var next = DifferentialValues.snapshot(
                    className: className, objectId: objectId, datastore: datastore.id, version: current.version + 1,
                    rng: &rng)
                if !deleted && rng.chance(50) { next.createdAt = current.createdAt }
                current = next
                deleted = false
            }
            try await StorageWrites.put(current, deleted: deleted, datastoreKey: datastore.key, into: storage)
        }
        return deleted ? nil : current
    }
}
