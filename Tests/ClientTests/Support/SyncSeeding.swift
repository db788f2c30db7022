@testable import Rooftop
import RooftopShared

extension SyncFakeServer {
    /// Creates objects as another device of `user` would; returns their keys.
    @discardableResult
    func seed(
        _ count: Int, className: String = "Item", in datastore: DatastoreID = .default, as user: String = "u1",
        fields: (Int) -> [String: Value] = { ["i": .int(Int64($0))] }
    ) -> [ObjectKey] {
        (0..<count).map { index in
            let key = ObjectKey(datastore: datastore, className: className, objectId: "\(className.lowercased())\(index)")
            let updates = fields(index).sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
            write(as: user, Mutation(datastore: datastore, className: className, objectId: key.objectId, change: .update(updates)))
            return key
        }
    }

    /// Changes an object as another device of `user` would, on its current version.
    @discardableResult
    func update(_ key: ObjectKey, as user: String = "u1", _ updates: [FieldUpdate]) -> MutationResult {
        let version = object(key, owner: user)?.version
        return write(
            as: user,
            Mutation(datastore: key.datastore, className: key.className, objectId: key.objectId, baseVersion: version,
                     change: .update(updates)))
    }

    /// Deletes an object as another device of `user` would.
    func delete(_ key: ObjectKey, as user: String = "u1") {
        let version = object(key, owner: user)?.version
        write(
            as: user,
            Mutation(datastore: key.datastore, className: key.className, objectId: key.objectId, baseVersion: version,
                     change: .delete))
    }
}

extension RooftopClient {
    /// The keys stored locally in a datastore (deleted ones excluded).
    func storedKeys(in datastore: DatastoreID = .default, className: String? = nil) throws -> Set<ObjectKey> {
        Set(try core.store.objects(scope: core.scope, datastore: datastore, className: className).map(\.key))
    }
}
