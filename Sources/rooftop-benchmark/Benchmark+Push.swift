import NIOHTTP1
import RooftopShared

extension Benchmark {
    /// Phase `push create`: client 0 creates every object, `batch` mutations per push, one push
    /// after the other, as plain fields, asking for compact answers (as a syncing client that
    /// reads objects from its pulls would). Latency samples are per push.
    func pushCreates() async throws {
        let acl = objectACL
        let client = clients[0]
        var versions = [Int64](repeating: 0, count: dataset.objects.count)
        try await measure("push create", unit: "mut", trend: true) { samples in
            var sentBytes = 0
            var receivedBytes = 0
            var batches = 0
            for start in stride(from: 0, to: dataset.objects.count, by: settings.batch) {
                let range = start..<min(start + settings.batch, dataset.objects.count)
                let mutations = range.map { index in
                    let object = dataset.objects[index]
                    let updates = object.fields.sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
                    return Mutation(
                        datastore: datastore, className: Dataset.className, objectId: object.objectId,
                        change: .update(updates, acl: acl))
                }
                let answer = try await client.call(
                    API.push, body: PushRequest(mutations: mutations, compact: true))
                await samples.add([answer.elapsed])
                sentBytes += answer.sentBytes
                receivedBytes += answer.receivedBytes
                let response = answer.value
                batches += 1
                try require(
                    response.results.count == mutations.count,
                    "a push of \(mutations.count) answered \(response.results.count)")
                for (index, result) in zip(range, response.results) {
                    guard case .applied(_, let version, _, _) = result else {
                        throw BenchmarkError.wrongResult("creating object \(index) was refused: \(result)")
                    }
                    versions[index] = version
                }
            }
            return (
                dataset.objects.count,
                [
                    "pushes": Double(batches), "request MiB": Double(sentBytes) / 1_048_576,
                    "response MiB (compact)": Double(receivedBytes) / 1_048_576,
                ]
            )
        }
        createdVersions = versions
    }

    /// Phase `push update`: `clients` clients at once, each pushing its share of `updates`
    /// increments of `sum` on randomly chosen objects, `batch` per push. Each client bases a
    /// change on the version it last saw of the object (its own last push, else the creation),
    /// so an object another client changed since is merged by the `sum` rule.
    func pushUpdates() async throws {
        let total = settings.updates
        let count = clients.count
        let shares = (0..<count).map { total / count + ($0 < total % count ? 1 : 0) }
        let plans = (0..<count).map { client in
            var picker = random.derived(UInt64(100 + client))
            return (0..<shares[client]).map { _ in Int.random(in: 0..<dataset.objects.count, using: &picker) }
        }
        updatedObjects = Set(plans.joined())
        let context = UpdateContext(
            datastore: datastore, objectIds: dataset.objects.map(\.objectId), versions: createdVersions,
            batch: settings.batch)
        try await measure("push update", unit: "mut", trend: true) { samples in
            let merged = try await withThrowingTaskGroup(of: Int.self) { group in
                for (client, plan) in zip(clients, plans) {
                    group.addTask { try await context.run(plan, client: client, samples: samples) }
                }
                return try await group.reduce(0, +)
            }
            return (total, ["merged mutations": Double(merged), "clients": Double(count)])
        }
    }
}

/// What each concurrent client of the update phase needs (value types only, so the clients'
/// tasks share nothing mutable).
private struct UpdateContext: Sendable {
    var datastore: DatastoreID
    var objectIds: [String]
    var versions: [Int64]
    var batch: Int

    /// Pushes the increments of `plan` (object indexes) in batches.
    /// - Returns: How many mutations the server merged with changes made since their base.
    func run(_ plan: [Int], client: BenchmarkHTTPClient, samples: SampleCollector) async throws -> Int {
        var known = versions
        var merged = 0
        for start in stride(from: 0, to: plan.count, by: batch) {
            let targets = Array(plan[start..<min(start + batch, plan.count)])
            let mutations = targets.map { index in
                Mutation(
                    datastore: datastore, className: Dataset.className, objectId: objectIds[index],
                    baseVersion: known[index], change: .update([FieldUpdate("sum", .increment(1))]))
            }
            let answer = try await client.call(
                API.push, body: PushRequest(mutations: mutations, compact: true))
            await samples.add([answer.elapsed])
            let response = answer.value
            guard response.results.count == mutations.count else {
                throw BenchmarkError.wrongResult("a push of \(mutations.count) answered \(response.results.count)")
            }
            for (index, result) in zip(targets, response.results) {
                guard case .applied(_, let version, _, let merges) = result else {
                    throw BenchmarkError.wrongResult("an increment was refused: \(result)")
                }
                known[index] = version
                if !merges.isEmpty { merged += 1 }
            }
        }
        return merged
    }
}
