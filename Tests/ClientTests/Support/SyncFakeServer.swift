import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization

/// An in-process stand-in for `rooftop-server` behind the client's transport, for the pull-side
/// tests not yet moved to the real server (``RealSyncServer``, which the outbox and rebase tests
/// use): idempotent pushes (a mutation ID is answered with
/// its first result), merges of stale mutations with `ObjectMerge` and the default rules,
/// chains of one object's mutations on the same base in one push, an operation log per object,
/// a paged change feed with checkpoints, tombstones and removals, `notFound` for a deleted
/// datastore, accounts and datastores.
///
/// Tests script it: take it offline, fail the next requests, stop pulls after some pages, hold
/// pulls at a gate, write as another device.
final class SyncFakeServer: HTTPTransport {
    let state = Mutex(FakeServerState())
    /// Pulls wait here while it is closed.
    let pullGate = Gate()
    /// Pushes wait here while it is closed (before they are applied).
    let pushGate = Gate()

    // MARK: Scripting

    /// Whether every request fails with `noConnection`.
    var offline: Bool {
        get { state.withLock { $0.offline } }
        set { state.withLock { $0.offline = newValue } }
    }

    /// Makes the next request whose path starts with `prefix` fail with `error` (transport
    /// errors are thrown, others answered with their HTTP status).
    func failNext(_ prefix: String, with error: RooftopError, times: Int = 1) {
        state.withLock { $0.failures += Array(repeating: (prefix, error), count: times) }
    }

    /// Makes pulls fail with `network` once this many more pages have been served.
    func interruptPulls(afterPages pages: Int) { state.withLock { $0.pagesBeforeInterruption = pages } }

    /// Sets the indexes a class declares.
    func setIndexes(_ indexes: [[String]], for className: String) {
        state.withLock { $0.indexes[className] = indexes }
    }

    /// Sets the default page size of pulls.
    func setPageSize(_ size: Int) { state.withLock { $0.pageSize = size } }

    /// Creates an account directly; returns its user ID.
    @discardableResult
    func addUser(_ username: String, password: String = "secret-password") -> String {
        state.withLock { $0.addUser(username, password: password).objectId }
    }

    /// Applies a mutation as another device of `user` would (its own push).
    @discardableResult
    func write(as user: String, _ mutation: Mutation) -> MutationResult {
        state.withLock { state in
            var chains: [String: FakeServerState.Chain] = [:]
            return state.apply(mutation, user: user, chains: &chains)
        }
    }

    /// Hides an object from a user (the user lost read access): the next pull brings a removal.
    func hide(_ key: ObjectKey, owner: String, from user: String) {
        state.withLock { $0.hide(key, owner: owner, from: user) }
    }

    /// Deletes a datastore: pulls of it answer `notFound`.
    func deleteDatastore(_ id: DatastoreID, owner: String) {
        state.withLock { state in
            state.datastores[FakeServerState.datastoreKey(id, owner: owner)]?.deleted = true
        }
    }

    /// The object as the server stores it (`nil` when absent or deleted).
    func object(_ key: ObjectKey, owner: String) -> ObjectSnapshot? {
        state.withLock { $0.object(key, owner: owner) }
    }

    /// Every push received, in order.
    var pushes: [PushRequest] { state.withLock { $0.pushes } }
    /// Every pull request received, in order.
    var pulls: [PullRequest] { state.withLock { $0.pullRequests } }
    /// How many mutations the server applied (each mutation ID once).
    var appliedMutationCount: Int { state.withLock { $0.results.values.count(where: \.isApplied) } }
    /// The paths requested, in order.
    var requestLog: [String] { state.withLock { $0.log } }

    // MARK: Transport

    func send(_ request: TransportRequest) async throws(RooftopError) -> TransportResponse {
        let path = request.path
        let user = request.headers.first { $0.0 == "X-Rooftop-Session-Token" }.flatMap { header in
            state.withLock { $0.tokens[header.1] }
        }
        let failure: RooftopError? = state.withLock { state in
            state.log.append("\(request.method) \(path)")
            if state.offline { return RooftopError(.noConnection, "offline (fake server)") }
            guard let index = state.failures.firstIndex(where: { path.hasPrefix($0.0) }) else { return nil }
            return state.failures.remove(at: index).1
        }
        if let failure {
            if failure.isConnectivity { throw failure }
            return SyncFakeServer.answer(failure)
        }
        if path == "/v1/pull" { await pullGate.pass() }
        if path == "/v1/push" { await pushGate.pass() }
        do {
            return try route(request, user: user)
        } catch let error as RooftopError {
            if error.isConnectivity { throw error }
            return SyncFakeServer.answer(error)
        } catch {
            return SyncFakeServer.answer(RooftopError(.request, "bad request: \(error)"))
        }
    }

    func shutdown() async {}

    static func answer(_ error: RooftopError) -> TransportResponse {
        FaultTransport.answer(error)
    }

    static func ok(_ value: some Encodable) throws -> TransportResponse {
        TransportResponse(status: 200, body: try JSONEncoder().encode(value))
    }
}

/// A gate tasks pass while it is open and wait at while it is closed. The waiting go on when it
/// opens, or are turned back (``drop()``: the connection they were on went down).
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Bool, Never>])>((true, []))

    /// How many tasks wait at the gate.
    var waiting: Int { state.withLock { $0.waiting.count } }

    func close() { state.withLock { $0.open = false } }

    /// Opens the gate: the waiting go on, and later ones pass.
    func open() { release(passing: true) }

    /// Turns the waiting back; the gate stays closed.
    func drop() { release(passing: false) }

    private func release(passing: Bool) {
        let waiting = state.withLock { state in
            if passing { state.open = true }
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: passing) }
    }

    /// Waits while the gate is closed.
    /// - Returns: Whether the task goes on (false: turned back by ``drop()``).
    @discardableResult
    func pass() async -> Bool {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if open { continuation.resume(returning: true) }
        }
    }
}
