import Foundation
@testable import Rooftop
import RooftopShared
import RooftopTestSupport
import Synchronization
import Testing

/// The sync engines are given their dependencies (store, API, account…), not the core: they
/// never keep a client alive, and they stop with it.
@Suite("Client lifecycle: engines stop with the client", .timeLimit(.minutes(5)))
struct ClientLifecycleTests {
    /// The code a sync operation failed with, `nil` when it succeeded.
    private static func failure(_ operation: () async throws -> Void) async -> RooftopError.Code? {
        do {
            try await operation()
            return nil
        } catch {
            return (error as? RooftopError)?.code
        }
    }

    @Test("after shutdown, pushes, pulls and continuous sync throw closed")
    func closedAfterShutdown() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            try await client.sync.pull(datastore: .default)
            await server.shutdown(client)
            #expect(await Self.failure { try await client.sync.push() } == .closed)
            #expect(await Self.failure { try await client.sync.pull(datastore: .default) } == .closed)
            #expect(await Self.failure { try await client.sync.startContinuous(datastores: [.default]) } == .closed)
        }
    }

    @Test("a client dropped without shutdown is freed, and its engines stop")
    func droppedClientStopsItsEngines() async throws {
        try await withRealServer { server in try await droppedClientStopsItsEngines(server) }
    }

    private func droppedClientStopsItsEngines(_ server: RealSyncServer) async throws {
        /// A client used (an object saved and pushed), then dropped: its core, weakly, and its sync engine.
        func used() async throws -> (core: () -> ClientCore?, sync: SyncEngine, events: AsyncStream<OutboxEvent>) {
            let client = try server.client(kept: false)
            _ = try await client.signUpForTest("ann")
            let note = client.object("Note", id: "a")
            note["n"] = 1
            try await note.saveEventually()
            try await client.sync.push()
            weak let core = client.core
            return ({ core }, client.sync, client.core.outboxEngine.events.stream())
        }
        let (core, sync, events) = try await used()
        // The queue's engine ends its events when it stops.
        let ended = Mutex(false)
        let listener = Task {
            for await _ in events {}
            ended.withLock { $0 = true }
        }
        defer { listener.cancel() }
        #expect(try await server.appliedMutationCount() == 1)
        #expect(core() == nil, "nothing the engines hold leads back to the core")
        try await TestWait.until("the dropped client's engines stop") {
            await Self.failure { try await sync.push() } == .closed
        }
        try await TestWait.until("the offline queue's engine stops") { ended.withLock { $0 } }
        // The sync engine still held, the local datastore closes all the same.
        try await TestWait.until("the dropped client's datastore closes") {
            (try? sync.dependencies.store.outboxCount(scope: "")) == nil
        }
    }

    @Test("roles a pull read before a sign-out do not bring the signed-out session back")
    func rolesDoNotUndoASignOut() throws {
        let store = try LocalStore(.inMemory)
        defer { store.close() }
        let alice = StoredSession(user: UserInfo(objectId: "alice", username: "alice", roles: []), token: "t", expiresAt: Timestamp(millisecondsSinceEpoch: 4_102_444_800_000))
        try store.saveSession(alice)
        let account = Account(store: store, restored: alice)
        // The writer is held while the sign-out and the pull's roles come.
        let release = DispatchSemaphore(value: 0)
        let writerHeld = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            _ = try? store.write(scope: "") { _ in
                writerHeld.signal()
                release.wait()
            }
            done.leave()
        }
        writerHeld.wait()
        let signOut = Mutex<RooftopError?>(nil)
        done.enter()
        Thread.detachNewThread {
            do throws(RooftopError) { try account.replace(with: StoredSession?.none) } catch { signOut.withLock { $0 = error } }
            done.leave()
        }
        let deadline = Date().addingTimeInterval(10)
        while store.waitingWriteCount < 1 && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        #expect(store.waitingWriteCount == 1, "the sign-out waits for the writer")
        let roles = Mutex<RooftopError?>(nil)
        done.enter()
        Thread.detachNewThread {
            do throws(RooftopError) { try account.updateRoles(["Staff"], scope: "alice") } catch { roles.withLock { $0 = error } }
            done.leave()
        }
        // Unserialized, the roles' save would queue behind the sign-out's: give it the chance.
        let chance = Date().addingTimeInterval(0.5)
        while store.waitingWriteCount < 2 && Date() < chance { Thread.sleep(forTimeInterval: 0.001) }
        release.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(signOut.withLock { $0 } == nil && roles.withLock { $0 } == nil)
        #expect(account.current == nil, "signed out in memory")
        #expect(try store.session() == nil, "signed out on disk")
    }
}
