import Foundation
@testable import Rooftop
import RooftopShared
import RooftopTestSupport
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
        let server = SyncFakeServer()
        let client = try syncClient(server)
        _ = try await client.signUpForTest("ann")
        try await client.sync.pull(datastore: .default)
        await client.shutdown()
        #expect(await Self.failure { try await client.sync.push() } == .closed)
        #expect(await Self.failure { try await client.sync.pull(datastore: .default) } == .closed)
        #expect(await Self.failure { try await client.sync.startContinuous(datastores: [.default]) } == .closed)
    }

    @Test("a client dropped without shutdown is freed, and its engines stop")
    func droppedClientStopsItsEngines() async throws {
        let server = SyncFakeServer()
        /// A client used (an object saved and pushed), then dropped: its core, weakly, and its sync engine.
        func used() async throws -> (core: () -> ClientCore?, sync: SyncEngine) {
            let client = try syncClient(server)
            _ = try await client.signUpForTest("ann")
            let note = client.object("Note", id: "a")
            note["n"] = 1
            try await note.saveEventually()
            try await client.sync.push()
            weak let core = client.core
            return ({ core }, client.sync)
        }
        let (core, sync) = try await used()
        #expect(server.appliedMutationCount == 1)
        #expect(core() == nil, "nothing the engines hold leads back to the core")
        try await TestWait.until("the dropped client's engines stop") {
            await Self.failure { try await sync.push() } == .closed
        }
    }
}
