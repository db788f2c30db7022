import Foundation
import RooftopChaos
import RooftopTestSupport
import Synchronization

/// One replica of a convergence run, as the harness drives it: in the test process or in a
/// `rooftop-chaos-client` process (which can crash and be reopened on its cache file), always
/// behind its own ``FaultProxy``.
final class ConvergenceReplica: Sendable {
    private enum Handle: Sendable {
        case local(ChaosReplica)
        case process(ChaosProcess)
    }

    /// The replica's number in the run.
    let index: Int
    /// Its user's number in the run.
    let user: Int
    /// Whether it runs in its own process.
    let isProcess: Bool
    /// The proxy between it and the server.
    let proxy: FaultProxy
    private let settings: ChaosReplicaSettings
    private let ledger: ConvergenceLedger
    private let handle = Mutex<Handle?>(nil)
    private let lives = Mutex(0)

    init(
        index: Int, user: Int, isProcess: Bool, proxy: FaultProxy, settings: ChaosReplicaSettings,
        ledger: ConvergenceLedger
    ) {
        self.index = index
        self.user = user
        self.isProcess = isProcess
        self.proxy = proxy
        self.settings = settings
        self.ledger = ledger
    }

    /// Which process of the replica is running (0 for the first).
    var life: Int { lives.withLock { $0 } }

    /// Opens the replica (the first time, it signs in: its proxy must let it through).
    func open() async throws {
        let ledger = self.ledger
        let index = self.index
        if isProcess {
            let process = try await ChaosProcess.start(settings) { ledger.record($0, replica: index) }
            handle.withLock { $0 = .process(process) }
        } else {
            let replica = try await ChaosReplica.open(settings) { ledger.record($0, replica: index) }
            handle.withLock { $0 = .local(replica) }
        }
    }

    /// Runs a command (with a deadline for processes).
    func perform(_ command: ChaosCommand) async throws -> ChaosReply {
        switch handle.withLock({ $0 }) {
        case .local(let replica):
            do {
                return try await withDeadline(.seconds(60), "replica \(index): \(command.kind)") {
                    await replica.perform(command)
                }
            } catch {
                // Where the replica stood: its queue, and what happened to it last.
                let pending = replica.hasPendingWrites.map { "\($0)" } ?? "unreadable"
                throw ConvergenceFailure(
                    """
                    \(error); changes not answered: \(pending); last events:
                    \(replica.trace.recent.joined(separator: "\n"))
                    """)
            }
        case .process(let process): return try await process.perform(command)
        case nil: throw ConvergenceFailure("replica \(index) is not open")
        }
    }

    /// Kills the replica's process with SIGKILL and starts a new one on the same cache file.
    func crashAndReopen() async throws {
        guard case .process(let process) = handle.withLock({ $0 }) else { return }
        await process.kill()
        lives.withLock { $0 += 1 }
        try await open()
    }

    /// Shuts the replica down (processes are asked to stop, then killed if they linger).
    func close() async {
        switch handle.withLock({ handle in defer { handle = nil }; return handle }) {
        case .local(let replica): await replica.close()
        case .process(let process): await process.stop()
        case nil: break
        }
    }
}

/// A failed expectation of the convergence harness, with what it saw.
struct ConvergenceFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
