import Foundation
@_spi(Testing) import Rooftop
import RooftopShared
import Synchronization

/// One replica of the randomized convergence harness: a ``RooftopClient`` on its own cache file,
/// signed in as one user, keeping one shareable datastore in continuous sync, and making the
/// changes it is told to (``ChaosCommand``) through the offline queue.
///
/// The same type runs inside the test process and inside `rooftop-chaos-client` processes, so
/// that both kinds of replica behave alike; the acknowledgements and refusals of its offline queue
/// are handed to `onEvent` as they happen.
///
/// ```swift
/// let replica = try await ChaosReplica.open(settings) { event in record(event) }
/// let reply = await replica.perform(ChaosCommand(.increment, objectId: id, int: 4))
/// await replica.close()
/// ```
public actor ChaosReplica {
    /// The class every replica changes.
    public static let className = "Item"

    /// A bulk load's thresholds when the settings ask for one: from 4 changes ahead, a pass for
    /// every 3 objects stored, so that the few objects of a run take several passes.
    static let bulkLoadThresholds = BulkLoadThresholds(threshold: 4, passSize: 3, growth: 0)

    /// The local queries a snapshot runs besides the plain listing, by name: orders by each field
    /// (through a declared index when one has it) and conditions bounded from below, from above
    /// and by a prefix. The harness checks each against the shared evaluator over the listing.
    public static let checkedQueries: [(name: String, predicate: QueryPredicate?, order: String)] = [
        ("by a", nil, "a"), ("by b", nil, "b"), ("by n", nil, "n"),
        ("a >= 40", Field("a") >= 40, "n"), ("a < 40", Field("a") < 40, "b"),
        ("b starts with r1", Field("b").startsWith("r1"), "a"), ("n > 0", Field("n") > 0, "a"),
    ]

    private let client: RooftopClient
    private let datastoreID: DatastoreID
    /// `nil` while the datastore could not be opened (a user who lost access to it, reopened
    /// offline); opening is tried again with each command.
    private var openDatastore: Datastore?
    private let events: Task<Void, Never>
    /// What happened last to the replica's queue and syncs, for a harness whose command missed
    /// its deadline to say where it stood.
    public nonisolated let trace: ChaosTrace

    private init(
        client: RooftopClient, datastoreID: DatastoreID, datastore: Datastore?, events: Task<Void, Never>,
        trace: ChaosTrace
    ) {
        self.client = client
        self.datastoreID = datastoreID
        self.openDatastore = datastore
        self.events = events
        self.trace = trace
    }

    /// Whether the replica's queue holds changes not answered yet (`nil` when it cannot be read).
    public nonisolated var hasPendingWrites: Bool? { try? client.outbox.hasPendingWrites }

    /// The datastore, opened now if it was not (a shareable datastore unknown locally is looked
    /// up on the server).
    private func datastore() async throws -> Datastore {
        if let openDatastore { return openDatastore }
        let datastore = try await client.datastores.open(datastoreID)
        openDatastore = datastore
        return datastore
    }

    /// Opens the client on its cache file, signs in when the file has no session yet, and starts
    /// continuous sync of the datastore.
    /// - Throws: ``RooftopError`` when the client cannot be made, or signing in fails.
    public static func open(
        _ settings: ChaosReplicaSettings, onEvent: @escaping @Sendable (ChaosEvent) -> Void
    ) async throws -> ChaosReplica {
        guard let url = URL(string: settings.serverURL) else {
            throw RooftopError(.illegalArgument, "bad server URL \(settings.serverURL)")
        }
        var configuration = ClientConfiguration(serverURL: url)
        configuration.trust = .certificateAuthority(pem: settings.caPEM)
        configuration.storage = .file(path: settings.cacheFile)
        configuration.requestTimeout = .milliseconds(settings.requestTimeoutMilliseconds)
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(400), jitter: 0.2)
        configuration.bulkInitialSync = settings.bulkInitialSync
        configuration.bulkLoadThresholds = Self.bulkLoadThresholds
        let client = try await RooftopClient(configuration: configuration)
        let trace = ChaosTrace()
        do {
            // Subscribe before anything is sent, so that no answer is missed.
            let stream = client.outbox.events
            let merges = client.sync.mergeDecisions
            let events = Task {
                // Every merge decision the client sees (the server's, answering a push, and its
                // own, rebasing queued changes over pulled ones), for the harness to check.
                let decisions = Task {
                    for await merge in merges {
                        let mutationId: String =
                            switch merge.source {
                            case .push(let id): id.rawValue
                            case .rebase: ""
                            }
                        onEvent(ChaosEvent(mutationId: mutationId, objectId: merge.key.objectId, merge: merge.decision))
                    }
                }
                defer { decisions.cancel() }
                for await event in stream {
                    trace.add("outbox \(event.mutationId.rawValue.prefix(8)): \(event.kind)")
                    switch event.kind {
                    case .acknowledged(let version, _):
                        onEvent(ChaosEvent(mutationId: event.mutationId.rawValue, acknowledgedVersion: version))
                    case .rejected(let error):
                        onEvent(ChaosEvent(mutationId: event.mutationId.rawValue, rejectedCode: error.code.rawValue))
                    default:
                        break
                    }
                }
            }
            if client.currentUser?.username != settings.username {
                _ = try await client.logIn(username: settings.username, password: settings.password)
            }
            let datastoreID = try DatastoreID(settings.datastore)
            let datastore = try? await client.datastores.open(datastoreID)
            try await client.sync.startContinuous(datastores: [datastoreID])
            return ChaosReplica(
                client: client, datastoreID: datastoreID, datastore: datastore, events: events, trace: trace)
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// Does what `command` says; failures are part of the reply, never thrown.
    public func perform(_ command: ChaosCommand) async -> ChaosReply {
        do {
            return try await run(command)
        } catch {
            var reply = ChaosReply()
            reply.error = "\(error)"
            return reply
        }
    }

    /// Stops syncing and shuts the client down.
    public func close() async {
        await client.sync.stop()
        await client.shutdown()
        events.cancel()
    }

    private func run(_ command: ChaosCommand) async throws -> ChaosReply {
        var reply = ChaosReply()
        switch command.kind {
        case .create:
            guard let id = command.objectId else { throw RooftopError(.illegalArgument, "create needs an object ID") }
            let object: RooftopObject
            do {
                object = try await datastore().object(Self.className, id: id)
            } catch let error as RooftopError {
                reply.skipped = "the datastore cannot be opened: \(error.code)"
                return reply
            }
            object["a"] = .int(command.int ?? 0)
            object["b"] = .string(command.text ?? "")
            object["l"] = .list([])
            object.acl = acl(named: command.acl)
            reply.mutationId = try await object.saveEventually()?.rawValue
        case .share:
            guard let text = command.text, let role = SharingRole(name: text),
                let principal = command.principal
            else { throw RooftopError(.illegalArgument, "share needs a role and a principal") }
            _ = try await datastore().share(role, with: try Principal(principal))
        case .syncUntilIdle:
            await client.sync.stop()
            trace.add("syncUntilIdle: waiting for the queue")
            try await client.outbox.waitUntilIdle()
            trace.add("syncUntilIdle: queue idle; pulling")
            reply.error = try await pullUntilDone()
            trace.add("syncUntilIdle: done (\(reply.error ?? "pulled"))")
        case .push:
            try await client.sync.push(datastore: datastoreID)
        case .snapshot:
            let local = client.query(Self.className, in: datastoreID).fromLocalDatastore().limit(1000)
            let objects = try await local.find()
            reply.objects = Dictionary(
                objects.objects.map { ($0.objectId, $0.snapshot) }, uniquingKeysWith: { first, _ in first })
            var checked: [String: [String]] = [:]
            for query in Self.checkedQueries {
                var filtered = local.order(by: query.order)
                if let predicate = query.predicate { filtered = filtered.where(predicate) }
                checked[query.name] = try await filtered.find().objects.map(\.objectId)
            }
            reply.checked = checked
            reply.count = try await local.count()
            reply.bulkLoads = client.sync.bulkLoadsBegun
            reply.storeInconsistencies = try client.sync.storeInconsistencies()
        case .statuses:
            var statuses: [String: String] = [:]
            for text in command.ids ?? [] {
                statuses[text] = try describe(client.outbox.status(of: try MutationID(text)))
            }
            reply.statuses = statuses
            // Each refusal under its own ID and under those of the changes folded into it.
            reply.rejected = Dictionary(
                try client.outbox.rejected().flatMap { change in
                    ([change.mutationId] + change.foldedMutationIds).map { ($0.rawValue, change.error.code.rawValue) }
                },
                uniquingKeysWith: { first, _ in first })
        case .stop:
            break
        default:
            try await change(command, &reply)
        }
        return reply
    }

    /// Pulls the datastore and refreshes the user's roles, trying again (up to 10 times) when a
    /// connection left over from a fault fails.
    /// - Returns: `notFound` or `disallowed` when the user lost access to the datastore.
    private func pullUntilDone() async throws -> String? {
        var attempt = 0
        while true {
            attempt += 1
            do {
                _ = try await client.refreshCurrentUser()
                try await client.sync.pull(datastore: datastoreID)
                return nil
            } catch let error as RooftopError {
                // A user who lost access to the datastore is told so by the pull (and drops it).
                trace.add("pull attempt \(attempt) failed: \(error.code)")
                if error.code == .notFound || error.code == .disallowed { return error.code.rawValue }
                let passing: Set<RooftopError.Code> = [.noConnection, .network, .timeout, .tls]
                if !passing.contains(error.code) || attempt >= 10 { throw error }
            }
        }
    }

    /// A change to an object stored locally (skipped when it is not).
    private func change(_ command: ChaosCommand, _ reply: inout ChaosReply) async throws {
        guard let id = command.objectId else { throw RooftopError(.illegalArgument, "\(command.kind) needs an object ID") }
        let object: RooftopObject
        do {
            object = try await client.query(Self.className, in: datastoreID).fromLocalDatastore().getObject(id)
        } catch {
            reply.skipped = "not stored locally"
            return
        }
        guard !object.isDeleted else {
            reply.skipped = "deleted"
            return
        }
        let list = object.list("l") ?? []
        let pick = Int(truncatingIfNeeded: (command.pick ?? 0) & 0xFFFF)
        switch command.kind {
        case .setA: object["a"] = .int(command.int ?? 0)
        case .setB: object["b"] = .string(command.text ?? "")
        case .increment: try object.increment("n", by: .int(command.int ?? 0))
        case .append: try object.append(.string(command.text ?? ""), to: "l")
        case .insert: try object.insert(.string(command.text ?? ""), at: pick % (list.count + 1), in: "l")
        case .remove, .move:
            guard !list.isEmpty else {
                reply.skipped = "empty list"
                return
            }
            let source = pick % list.count
            reply.element = list[source].stringValue
            if command.kind == .remove {
                try object.remove(at: source, from: "l")
            } else {
                try object.move(from: source, to: (pick / 7) % list.count, in: "l")
            }
        case .changeACL: object.acl = acl(named: command.acl)
        case .delete:
            reply.mutationId = try await object.deleteEventually().rawValue
            return
        default:
            throw RooftopError(.illegalArgument, "\(command.kind) is not an object change")
        }
        if let id = try await object.saveEventually() {
            reply.mutationId = id.rawValue
        } else {
            reply.skipped = "nothing to save"
        }
    }

    private func acl(named name: String?) -> ACL? {
        let me = client.currentUser?.objectId ?? ""
        switch name {
        case "public": return .publicReadWrite
        case "readOnly": return ACL([.everyone: ACL.Access(read: true), .user(me): ACL.Access(read: true, write: true)])
        case "crew": return ACL([.role("crew"): ACL.Access(read: true, write: true), .user(me): ACL.Access(read: true, write: true)])
        case "creator": return ACL.only(me)
        default: return nil
        }
    }

    private func describe(_ status: OutboxStatus?) -> String {
        switch status {
        case nil: "unknown"
        case .pending: "pending"
        case .sent: "sent"
        case .acknowledged(let version): "acknowledged:\(version)"
        case .rejected(let code, _): "rejected:\(code.rawValue)"
        }
    }
}

/// The last lines of what happened to a replica (``ChaosReplica/trace``), oldest first.
public final class ChaosTrace: Sendable {
    private static let capacity = 40
    private let lines = Mutex<[String]>([])

    init() {}

    func add(_ line: String) {
        let stamp = Date().timeIntervalSince1970
        lines.withLock { lines in
            if lines.count == Self.capacity { lines.removeFirst() }
            lines.append(String(format: "%.3f ", stamp) + line)
        }
    }

    /// The lines kept, oldest first.
    public var recent: [String] { lines.withLock { $0 } }
}
