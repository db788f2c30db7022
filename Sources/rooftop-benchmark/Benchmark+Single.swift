import NIOHTTP1
import RooftopShared

extension Benchmark {
    /// How many single creates and gets the `single …` phases make.
    var singleCount: Int { min(settings.objects, 500) }

    /// Phases `single create` and `single get`: one object at a time over one kept-alive
    /// connection, one request after the other, as an app without the offline queue works (REST
    /// `POST …/objects`, then `GET …/objects/{id}` of each). The figure that matters is the p50.
    func singleObjects() async throws {
        let client = clients[0]
        let path = "/v1/datastores/\(datastore)/classes/\(Dataset.className)/objects"
        var created: [String] = []
        try await measure("single create", unit: "req") { samples in
            for index in 0..<singleCount {
                let object = dataset.objects[index % dataset.objects.count]
                let body = SingleObjectBody(objectId: ObjectID.generate(), fields: object.fields, acl: objectACL)
                let answer = try await client.call(.POST, path, body: body, as: SingleWriteReply.self)
                await samples.add([answer.elapsed])
                try require(answer.value.object?.fields == object.fields, "a single create answered other fields")
                created.append(body.objectId)
            }
            return (created.count, [:])
        }
        try await measure("single get", unit: "req") { samples in
            for id in created {
                let answer = try await client.call(.GET, path + "/" + id, as: SingleGetReply.self)
                await samples.add([answer.elapsed])
                try require(answer.value.object.objectId == id, "a single get answered another object")
            }
            return (created.count, [:])
        }
    }

    /// Phase `pull 100 new`: a client caught up first (not timed) pulls
    /// the 100 objects created since (one push, not timed): what a device pays to catch up after
    /// a short while.
    func pullNew() async throws {
        // Caught up first (not timed): the client phases changed objects since the last pull.
        _ = try await pullPages(since: checkpoint, samples: SampleCollector())
        let fresh = (0..<100).map { index in
            Mutation(
                datastore: datastore, className: Dataset.className, objectId: ObjectID.generate(),
                change: .update(
                    dataset.objects[index % dataset.objects.count].fields.sorted { $0.key < $1.key }
                        .map { FieldUpdate($0.key, .set($0.value)) }, acl: objectACL))
        }
        let pushed = try await clients[0].call(.POST, "/v1/push", body: PushRequest(mutations: fresh), as: PushResponse.self)
        try require(pushed.value.results.allSatisfy(\.isApplied), "a push of 100 new objects was refused")
        let synced = checkpoint
        try await measure("pull 100 new", unit: "obj") { samples in
            let answer = try await puller.call(
                .POST, "/v1/pull", body: PullRequest(datastore: datastore, since: synced, limit: settings.pageSize),
                as: PullResponse.self)
            await samples.add([answer.elapsed])
            let ids = Set(answer.value.changes.map(\.objectId))
            try require(
                ids == Set(fresh.map(\.objectId)),
                "the pull of 100 new objects answered \(answer.value.changes.count) changes")
            return (answer.value.changes.count, [:])
        }
    }
}

/// The body of a REST create.
private struct SingleObjectBody: Encodable {
    var objectId: String
    var fields: [String: Value]
    var acl: ACL
}

/// The answer to a REST create.
private struct SingleWriteReply: Decodable, Sendable {
    var version: Int64
    var object: ObjectSnapshot?
}

/// The answer to a REST get.
private struct SingleGetReply: Decodable, Sendable {
    var object: ObjectSnapshot
}
