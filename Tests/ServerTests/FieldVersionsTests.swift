import RooftopShared
import Testing

@testable import RooftopServer

/// Each field's version is kept only where it says something the object's version does not: a
/// creation (or a change that sets every field) stores no map, a change of some fields stores
/// every field's, and ``ObjectSnapshot/version(ofField:)`` reads either the same way.
@Suite("Field versions")
struct FieldVersionsTests {
    private func mutation(base: Int64?, _ change: ObjectChange) -> Mutation {
        Mutation(datastore: .app, className: "Note", objectId: "a", baseVersion: base, change: change)
    }

    @Test("a creation stores no map; a change of some fields stores each field's version", arguments: StorageBackend.tested)
    func storedOnlyWhenTheyDiffer(backend: StorageBackend) async throws {
        try await OpenAPITestServer.with(backend: backend) { server in
            let session = try await server.services.auth.signUp(SignUpRequest(username: "versions", password: "password-1"))
            let context = try await server.services.auth.authenticate(
                sessionToken: session.sessionToken, adminKey: nil, clientAddress: nil
            ).context
            let push = server.services.push
            let datastore = try #require(try await server.storage.datastore(id: .app, ownerId: nil))
            func stored() async throws -> ObjectSnapshot {
                try #require(try await server.storage.object(datastoreKey: datastore.key, className: "Note", objectId: "a"))
                    .snapshot
            }
            func apply(base: Int64?, _ updates: [FieldUpdate]) async throws {
                let answer = try await push.push(
                    PushRequest(mutations: [mutation(base: base, .update(updates))]), context: context)
                #expect(answer.results.allSatisfy { $0.isApplied })
            }

            try await apply(base: nil, [FieldUpdate("title", .set("one")), FieldUpdate("n", .set(1)), FieldUpdate("m", .set(1))])
            var object = try await stored()
            #expect(object.version == 1 && object.fieldVersions == nil)
            #expect(object.version(ofField: "title") == 1 && object.version(ofField: "gone") == nil)

            try await apply(base: 1, [FieldUpdate("n", .increment(1))])
            object = try await stored()
            #expect(object.fieldVersions == ["title": 1, "n": 2, "m": 1])
            #expect(object.version(ofField: "n") == 2 && object.version(ofField: "title") == 1)

            // A field removed leaves the map; the others keep theirs.
            try await apply(base: 2, [FieldUpdate("m", .unset)])
            object = try await stored()
            #expect(object.fieldVersions == ["title": 1, "n": 2])
            #expect(object.version(ofField: "m") == nil)

            // Every remaining field set at once: each at the object's version again, no map.
            try await apply(base: 3, [FieldUpdate("title", .set("two")), FieldUpdate("n", .set(5))])
            object = try await stored()
            #expect(object.version == 4 && object.fieldVersions == nil)
            #expect(object.version(ofField: "n") == 4 && object.version(ofField: "title") == 4)

            // What a pull sends (the stored body as it is) says the same.
            let pulled = try await server.services.pull.pull(PullRequest(datastore: .app), context: context).response()
            guard case .upsert(let sent) = try #require(pulled.changes.first) else {
                Issue.record("pulled \(pulled.changes)")
                return
            }
            #expect(sent.fieldVersions == nil && sent.version(ofField: "n") == 4)
        }
    }

    @Test("a map that does not name a field, and an object never saved, leave its version unknown")
    func partialMap() {
        #expect(ObjectSnapshot(className: "Note", objectId: "new", fields: ["n": 1]).version(ofField: "n") == nil)
        let object = ObjectSnapshot(
            className: "Note", objectId: "a", fields: ["n": 1, "old": 2], version: 3, fieldVersions: ["n": 3])
        #expect(object.version(ofField: "n") == 3 && object.version(ofField: "old") == nil)
        #expect(ObjectSnapshot.fieldVersions(["n": 3, "old": 3, "gone": 1], fields: object.fields, version: 3) == nil)
        #expect(ObjectSnapshot.fieldVersions(["n": 3], fields: object.fields, version: 3) == ["n": 3])
        #expect(ObjectSnapshot.fieldVersions(["n": 3, "old": 2, "gone": 1], fields: object.fields, version: 3) == ["n": 3, "old": 2])
    }
}
