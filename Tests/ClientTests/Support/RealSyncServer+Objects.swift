import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization

/// Objects written and read on the server by a user of the harness's own (`writer`), around the
/// scripted network: the state a query test starts from, changed as another app would change it.
/// Objects are readable and writable by everyone unless given an ACL.
extension RealSyncServer {
    /// Writes an object's fields (a creation, or a change on its current version) as the writer.
    /// - Returns: The object as the server then holds it.
    /// - Throws: When the write is refused or the server cannot be reached.
    @discardableResult
    func put(
        _ className: String, _ objectId: String, _ fields: [String: Value], acl: ACL? = nil,
        in datastore: DatastoreID = .app
    ) async throws -> ObjectSnapshot {
        let api = try await writer()
        let key = ObjectKey(datastore: datastore, className: className, objectId: objectId)
        let current = try await object(key, with: api)
        var everyone = ACL()
        everyone.setReadAccess(true, for: .everyone)
        everyone.setWriteAccess(true, for: .everyone)
        let updates = fields.sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
        let mutation = Mutation(
            datastore: datastore, className: className, objectId: objectId, baseVersion: current?.version,
            change: .update(updates, acl: acl ?? (current == nil ? everyone : nil)))
        let response = try await api.push(PushRequest(mutations: [mutation]))
        for case .rejected(_, let error) in response.results { throw error }
        guard let stored = try await object(key, with: api) else {
            throw RooftopError(.notFound, "\(key) was written but cannot be read back")
        }
        return stored
    }

    /// A client signed in as the harness's own user (``writer()``): it reads what ``put`` wrote
    /// in any datastore.
    /// - Throws: When the sign-up or the log-in fails.
    func writerClient() async throws -> RooftopClient {
        _ = try await writer()
        let client = try self.client()
        try await client.logIn(username: "writer", password: "secret-password")
        return client
    }

    /// The server's copy of an object, as the writer reads it (`nil`: not there).
    /// - Throws: When the server cannot be read.
    func object(_ className: String, _ objectId: String, in datastore: DatastoreID = .app) async throws -> ObjectSnapshot? {
        try await object(ObjectKey(datastore: datastore, className: className, objectId: objectId), with: try await writer())
    }

    private func object(_ key: ObjectKey, with api: RemoteAPI) async throws -> ObjectSnapshot? {
        do {
            return try await api.object(key, includes: []).object
        } catch where error.code == .notFound {
            return nil
        }
    }
}
