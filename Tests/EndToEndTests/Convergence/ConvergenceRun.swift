import Foundation
import RooftopChaos
import RooftopShared
import RooftopTestSupport

/// One iteration of the randomized convergence harness, decided by its seed: a fresh server, 3
/// users, 3-5 replicas (some in their own processes) each behind its own fault proxy, random
/// merge rules, then a random sequence of changes, network faults, server kills, replica crashes,
/// sharing and role changes; at the end everyone goes online and syncs until idle, and
/// ``ConvergenceChecks`` compare the replicas, the server and the ledger.
///
/// Half the iterations load first syncs in bulk: the server pages pulls by 4 changes, the
/// replicas load a first sync with 4 or more changes ahead in bulk (a pass every 3 objects,
/// ``ChaosReplica/bulkLoadThresholds``), and a replica joins half-way through, its first sync
/// under way amid the others' changes and the faults.
struct ConvergenceRun {
    /// How many steps (changes, faults, pauses) one iteration makes.
    static let steps = 100

    let seed: UInt64
    private var random: SeededGenerator
    /// The bulk iterations' own draws (whether, when a replica joins, whose and where).
    private var bulkRandom: SeededGenerator
    private var figures = ConvergenceFigures()
    private var objects: [String] = []
    private var increments: [String: Int] = [:]
    private var counter: Int64 = 0
    /// The server's arguments, on every start (pages of 4 changes in the bulk iterations).
    private var serverArguments: [String] = []
    /// Replicas made so far (their indexes and cache files).
    private var made = 0

    init(seed: UInt64) {
        self.seed = seed
        self.random = SeededGenerator(seed: seed)
        self.bulkRandom = SeededGenerator(seed: seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// Runs the iteration in `harness` (which stops the servers it started on every path);
    /// replicas and proxies are shut down here on every path.
    mutating func run(_ harness: ClientSyncHarness) async throws -> ConvergenceFigures {
        // Drawn from a generator of their own, so that every other draw of a seed is what it was
        // before the bulk iterations existed (recorded seeds replay the same changes and faults).
        let bulk = bulkRandom.chance(50)
        let joinStep = bulk ? bulkRandom.int(20...70) : nil
        serverArguments = bulk ? ["--default-pull-page-size", "4"] : []
        var server = try await harness.startServer(extraArguments: serverArguments)
        var api = try harness.api(server)
        let users = [try await api.newUser("u0"), try await api.newUser("u1"), try await api.newUser("u2")]
        try await api.createRole("crew", users: random.subset(users, percent: 50))
        let rules: [String: MergeRule] = [
            "a": random.pick([.remote, .local, .max, .min]), "b": random.pick([.remote, .local]), "n": .sum,
        ]
        // Half the runs declare an index: the server then keeps rows only of its field, and the
        // clients learn it for their local stores.
        let indexes: [[String]] = random.chance(50) ? [[random.pick(["a", "b", "n"])]] : []
        try await api.setClass(ChaosReplica.className, rules: rules, indexes: indexes)
        let datastore = try await api.shareableDatastore(owner: users[0], sharedWith: [users[1], users[2]])
        figures.mergeRules = rules.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            + (indexes.isEmpty ? "" : " index \(indexes[0][0])") + (bulk ? " bulk" : "")

        let ledger = ConvergenceLedger()
        let count = random.int(3...5)
        var replicas: [ConvergenceReplica] = []
        do {
            for index in 0..<count {
                // Replicas 0 and 1 live in the test process; the others in their own processes.
                replicas.append(try await addReplica(
                    user: index % users.count, isProcess: index >= 2, bulk: bulk, users: users,
                    datastore: datastore, server: server, ledger: ledger, harness: harness))
            }
            for index in 0..<Self.steps {
                if index == joinStep {
                    // Someone installs the app half-way through: a first sync of what is there.
                    replicas.append(try await addReplica(
                        user: bulkRandom.int(0...2), isProcess: bulkRandom.chance(50), bulk: bulk, users: users,
                        datastore: datastore, server: server, ledger: ledger, harness: harness))
                    figures.lateJoins += 1
                }
                do {
                    try await step(replicas, ledger: ledger, users: users, server: &server, api: &api, harness: harness)
                } catch {
                    // Which step failed, and the error's type: a bare transport error says
                    // nothing of where it came from.
                    throw ConvergenceFailure("step \(index) failed: \(type(of: error)): \(error)")
                }
            }

            // Everyone online; every queue drains, then everyone pulls what the others sent.
            for replica in replicas { replica.proxy.mode = .passThrough }
            for _ in 0..<2 {
                for replica in replicas {
                    let reply = try await replica.perform(ChaosCommand(.syncUntilIdle))
                    if let error = reply.error, error != "notFound", error != "disallowed" {
                        throw ConvergenceFailure("replica \(replica.index) could not sync until idle: \(error)")
                    }
                }
            }
            let fates = try await ConvergenceChecks(
                replicas: replicas, users: users, datastore: datastore, api: api, ledger: ledger, rules: rules
            ).run()
            figures.acknowledged = fates.acknowledged
            figures.rejected = fates.rejected.values.reduce(0, +)
            figures.rejectionCodes = fates.rejected
            figures.unknown = fates.unknown
            figures.mergeChoices = fates.mergeChoices
            figures.bulkLoads = fates.bulkLoads
            figures.replicas = replicas.count
            figures.processReplicas = replicas.filter(\.isProcess).count
            for replica in replicas { figures.add(replica.proxy.statistics) }
            figures.iterations = 1
        } catch {
            await Self.shutDown(replicas)
            throw error
        }
        await Self.shutDown(replicas)
        return figures
    }

    /// Opens a new replica of `user` on a cache file of its own, behind its own fault proxy (the
    /// caller shuts it down with the others).
    private mutating func addReplica(
        user: Int, isProcess: Bool, bulk: Bool, users: [TestUser], datastore: DatastoreID, server: ServerProcess,
        ledger: ConvergenceLedger, harness: ClientSyncHarness
    ) async throws -> ConvergenceReplica {
        let index = made
        made += 1
        let caPEM = try String(contentsOfFile: server.caCertificatePath, encoding: .utf8)
        let proxy = try await FaultProxy.start(targetPort: server.port)
        let settings = ChaosReplicaSettings(
            serverURL: "https://127.0.0.1:\(proxy.port)", caPEM: caPEM,
            cacheFile: harness.cacheFile("replica\(index)"), username: users[user].username,
            password: users[user].password, datastore: datastore.rawValue, requestTimeoutMilliseconds: 1500,
            bulkInitialSync: bulk)
        let replica = ConvergenceReplica(
            index: index, user: user, isProcess: isProcess, proxy: proxy, settings: settings, ledger: ledger)
        do {
            try await replica.open()
        } catch {
            await replica.close()
            await proxy.shutdown()
            // Which replica, and the error's type: a bare transport error says nothing of where.
            throw ConvergenceFailure("replica \(index) could not open: \(type(of: error)): \(error)")
        }
        return replica
    }

    private static func shutDown(_ replicas: [ConvergenceReplica]) async {
        for replica in replicas {
            await replica.close()
            await replica.proxy.shutdown()
        }
    }

    /// One random step.
    private mutating func step(
        _ replicas: [ConvergenceReplica], ledger: ConvergenceLedger, users: [TestUser], server: inout ServerProcess,
        api: inout APIClient, harness: ClientSyncHarness
    ) async throws {
        let roll = random.int(0...99)
        switch roll {
        case 0..<8 where objects.count >= 2:
            // Concurrent edits: two or three replicas set the same field of one object back to
            // back, each before it has heard of the others' change, so the field's merge rule
            // decides (on the server, or on a client rebasing its queued change).
            let id = random.pick(objects)
            let kind = random.pick([ChaosCommand.Kind.setA, .setA, .setB, .increment])
            let count = min(replicas.count, random.int(2...3))
            for replica in random.subset(replicas, count: count) {
                try await change(replica, ledger: ledger, on: (id, kind))
            }
        case 0..<62:
            try await change(random.pick(replicas), ledger: ledger)
        case 62..<72:
            let replica = random.pick(replicas)
            let mode = randomFault()
            replica.proxy.mode = mode
            figures.count(mode)
        case 72..<80:
            random.pick(replicas).proxy.mode = .passThrough
        case 80..<82:
            // The server crashes (SIGKILL) and comes back on its data directory; the proxies
            // keep the replicas' address.
            await server.kill()
            try await restart(&server, api: &api, replicas, harness: harness)
        case 82..<84:
            try await killDuringCommand(replicas, users: users, server: &server, api: &api, harness: harness)
        case 84..<87:
            let processes = replicas.filter(\.isProcess)
            guard !processes.isEmpty else { return }
            try await random.pick(processes).crashAndReopen()
            figures.processKills += 1
        case 87..<89:
            // The owner (user 0, replica 0) changes who may do what in the datastore.
            let principal = random.pick([users[1].id, users[2].id, "role:crew"])
            let role = random.pick(["editor", "editor", "viewer", "none"])
            let reply = try await replicas[0].perform(ChaosCommand(.share, text: role, principal: principal))
            if reply.error == nil { figures.sharingChanges += 1 }
        case 89..<91:
            let user = random.pick(Array(users.dropFirst()))
            let change =
                random.chance(50)
                ? UpdateRoleRequest(addUsers: [user.id]) : UpdateRoleRequest(removeUsers: [user.id])
            // Straight to the server, not through a proxy: a connection the server resets (it
            // may close a kept-alive one as the request goes) is a failed change, as in
            // ``killDuringCommand``; the checks read the role's members from the server.
            do {
                _ = try await api.updateRole("crew", change)
                figures.roleChanges += 1
            } catch let refusal as APIClientError {
                throw ConvergenceFailure("the server refused a role change: \(refusal)")
            } catch {
                figures.roleChangesLost += 1
            }
        default:
            // Let the replicas work for a moment: until some answer arrives, or 300 ms.
            let before = ledger.eventCount
            try? await TestWait.until(within: .milliseconds(300), "an answer") { ledger.eventCount > before }
        }
    }

    /// Starts the server again on its data directory after a SIGKILL; the proxies keep the
    /// replicas' address.
    private mutating func restart(
        _ server: inout ServerProcess, api: inout APIClient, _ replicas: [ConvergenceReplica], harness: ClientSyncHarness
    ) async throws {
        server = try await harness.startServer(dataDirectory: server.dataDirectory, extraArguments: serverArguments)
        api = try harness.api(server)
        for replica in replicas { replica.proxy.retarget(port: server.port) }
        figures.serverKills += 1
    }

    /// Kills the server (SIGKILL) while a command is in flight: a replica sending its queue now
    /// (a push request, possibly mid-commit), the owner changing a sharing role, or the harness
    /// changing the role's members. The kill comes 0-40 ms after the command starts (a request
    /// over loopback TLS takes a few milliseconds to tens of them in a debug build); the server
    /// restarts before the command's answer is awaited, so a command that retries may still
    /// succeed. A failed command is fine; what it did or did not do must satisfy the checks.
    private mutating func killDuringCommand(
        _ replicas: [ConvergenceReplica], users: [TestUser], server: inout ServerProcess, api: inout APIClient,
        harness: ClientSyncHarness
    ) async throws {
        let delay = Duration.milliseconds(random.int(0...40))
        let command: Task<Bool, Never>
        switch random.int(0...5) {
        case 0..<4:
            let replica = random.pick(replicas)
            command = Task { (try? await replica.perform(ChaosCommand(.push)))?.error == nil }
        case 4:
            let share = ChaosCommand(
                .share, text: random.pick(["editor", "viewer", "none"]),
                principal: random.pick([users[1].id, users[2].id, "role:crew"]))
            let owner = replicas[0]
            command = Task { (try? await owner.perform(share))?.error == nil }
        default:
            let user = random.pick(Array(users.dropFirst()))
            let change =
                random.chance(50) ? UpdateRoleRequest(addUsers: [user.id]) : UpdateRoleRequest(removeUsers: [user.id])
            let client = api
            command = Task { (try? await client.updateRole("crew", change)) != nil }
        }
        try await Task.sleep(for: delay)
        await server.kill()
        try await restart(&server, api: &api, replicas, harness: harness)
        figures.commandKills += 1
        if !(await command.value) { figures.killedCommandsFailed += 1 }
    }

    /// A random change on one replica (or a change of the kind given, to the object given),
    /// recorded in the ledger when it was queued.
    private mutating func change(
        _ replica: ConvergenceReplica, ledger: ConvergenceLedger, on target: (String, ChaosCommand.Kind)? = nil
    ) async throws {
        counter += 1
        let tag = "r\(replica.index)-\(counter)"
        var command: ChaosCommand
        if target == nil && (objects.count < 2 || (objects.count < 8 && random.chance(20))) {
            let id = ObjectID.generate(at: Timestamp(Date()), using: &random)
            command = ChaosCommand(
                .create, objectId: id, int: counter, text: tag,
                acl: random.pick(["public", "public", "public", "readOnly", "crew", "creator"]))
        } else {
            let (id, kind) =
                target
                ?? (random.pick(objects), random.pick(
                    [ChaosCommand.Kind.setA, .setA, .setB, .increment, .increment, .increment, .append, .append,
                     .insert, .remove, .move, .changeACL, .delete]))
            command = ChaosCommand(kind, objectId: id, pick: random.next())
            switch kind {
            case .setA: command.int = counter
            case .setB, .append, .insert: command.text = tag
            case .increment:
                // Each increment of an object adds its own power of four, so the total tells
                // exactly which increments were applied, and any applied twice shows as an odd bit.
                let slot = increments[id, default: 0]
                guard slot < 31 else { return }
                command.int = Int64(1) << (2 * slot)
            case .changeACL: command.acl = random.pick(["public", "readOnly", "crew", "creator"])
            default: break
            }
        }
        let reply = try await replica.perform(command)
        if let error = reply.error { throw ConvergenceFailure("replica \(replica.index) failed \(command): \(error)") }
        guard let mutationId = reply.mutationId, let objectId = command.objectId else {
            figures.skipped += 1
            return
        }
        if command.kind == .create { objects.append(objectId) }
        if command.kind == .increment { increments[objectId, default: 0] += 1 }
        ledger.issue(.init(
            mutationId: mutationId, replica: replica.index, life: replica.life, command: command, element: reply.element))
        figures.changes += 1
    }

    private mutating func randomFault() -> FaultProxy.Mode {
        switch random.int(0...6) {
        case 0: .down
        case 1: .blackhole
        case 2: .resetRequest(afterBytes: random.int(0...3000))
        case 3: .resetResponse(afterBytes: random.int(0...6000))
        case 4: .latency(.milliseconds(random.int(5...150)))
        case 5: .halfOpen(random.chance(50) ? .toClient : .toServer)
        default: .down
        }
    }
}
