import NIOHTTP1
import RooftopShared

extension Benchmark {
    /// Phase `push concurrent`: every client at once creates objects of its own in one new
    /// shareable datastore (client 0's, every other client an editor), `batch` per push: many
    /// writers of one datastore, against `push create`'s one.
    func pushConcurrently() async throws {
        let shared = try await clients[0].call(
            API.createDatastore, body: CreateDatastoreRequest(title: "concurrent writers")
        ).value.id
        for userId in userIds.dropFirst() {
            _ = try await clients[0].call(
                API.setDatastoreRole, API.setDatastoreRole.path(shared.rawValue),
                body: SetRoleRequest(principal: .user(userId), role: .editor))
        }
        try await createConcurrently("push concurrent", prefix: "c", datastores: [shared])
    }

    /// Phase `push many datastores`: every client at once creates objects of its own, its pushes
    /// going in turn to its private `default` datastore and to `:app` (which every user writes):
    /// writers of many datastores and of the one they share.
    /// Then phase `query eq, small datastore` (``querySmallDatastore(client:categoryCounts:)``)
    /// queries client 1's `default` (client 0's with one client).
    func pushManyDatastores() async throws {
        let datastores: [DatastoreID] = [.default, .app]
        try await createConcurrently("push many datastores", prefix: "m", datastores: datastores)
        let client = min(1, clients.count - 1)
        let owned = concurrentShare(of: client, total: concurrentTotal, datastores: datastores).filter {
            $0.datastore == .default
        }
        try await querySmallDatastore(
            client: clients[client],
            categoryCounts: owned.reduce(into: [:]) { $0[$1.object.category, default: 0] += 1 })
    }

    /// How many objects a concurrent phase creates, over all clients: half of `--objects`.
    private var concurrentTotal: Int { max(clients.count, dataset.objects.count / 2) }

    /// The objects client `client` creates in a concurrent phase of `total`, in order: its index
    /// among them, the data set's object, and the datastore its push goes to (the next of
    /// `datastores` every `batch`).
    private func concurrentShare(
        of client: Int, total: Int, datastores: [DatastoreID]
    ) -> [(index: Int, object: Dataset.Object, datastore: DatastoreID)] {
        let share = total / clients.count + (client < total % clients.count ? 1 : 0)
        return (0..<share).map { index in
            (
                index, dataset.objects[(client + index * clients.count) % dataset.objects.count],
                datastores[(index / settings.batch) % datastores.count]
            )
        }
    }

    /// Every client at once creates its share of half of `--objects` new objects (the data set's
    /// fields, IDs of its own), `batch` per push, each push to the next of `datastores`; every
    /// creation must be applied.
    private func createConcurrently(_ name: String, prefix: String, datastores: [DatastoreID]) async throws {
        let total = concurrentTotal
        let acl = objectACL
        let batches: [[[Mutation]]] = clients.indices.map { client in
            let mutations = concurrentShare(of: client, total: total, datastores: datastores).map { index, object, datastore in
                let updates = object.fields.sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
                return Mutation(
                    datastore: datastore, className: Dataset.className,
                    objectId: "\(prefix)\(client)-\(index)", change: .update(updates, acl: acl))
            }
            return stride(from: 0, to: mutations.count, by: settings.batch).map {
                Array(mutations[$0..<min($0 + settings.batch, mutations.count)])
            }
        }
        try await measure(name, unit: "mut") { samples in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (client, pushes) in zip(clients, batches) {
                    group.addTask {
                        for mutations in pushes {
                            let answer = try await client.call(
                                API.push, body: PushRequest(mutations: mutations, compact: true))
                            await samples.add([answer.elapsed])
                            guard answer.value.results.count == mutations.count,
                                answer.value.results.allSatisfy({ if case .applied = $0 { true } else { false } })
                            else {
                                throw BenchmarkError.wrongResult("a concurrent push was not applied whole: \(answer.value.results.prefix(3))")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            return (total, ["clients": Double(clients.count), "datastores per client": Double(datastores.count)])
        }
    }
}
