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
        var created: [String] = []
        try await measure("single create", unit: "req") { samples in
            for index in 0..<singleCount {
                let object = dataset.objects[index % dataset.objects.count]
                let body = ObjectWriteBody(objectId: ObjectID.generate(), fields: object.fields, acl: objectACL)
                let answer = try await client.call(
                    API.createObject, API.createObject.path(datastore.rawValue, Dataset.className), body: body)
                await samples.add([answer.elapsed])
                try require(answer.value.object?.fields == object.fields, "a single create answered other fields")
                created.append(answer.value.objectId)
            }
            return (created.count, [:])
        }
        try await measure("single get", unit: "req") { samples in
            for id in created {
                let answer = try await client.call(API.getObject, API.getObject.path(datastore.rawValue, Dataset.className, id))
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
        let pushed = try await clients[0].call(API.push, body: PushRequest(mutations: fresh))
        try require(pushed.value.results.allSatisfy(\.isApplied), "a push of 100 new objects was refused")
        let synced = checkpoint
        try await measure("pull 100 new", unit: "obj") { samples in
            let answer = try await puller.call(
                API.pull, body: PullRequest(datastore: datastore, since: synced, limit: settings.pageSize))
            await samples.add([answer.elapsed])
            let ids = Set(answer.value.changes.map(\.objectId))
            try require(
                ids == Set(fresh.map(\.objectId)),
                "the pull of 100 new objects answered \(answer.value.changes.count) changes")
            return (answer.value.changes.count, [:])
        }
    }
}
