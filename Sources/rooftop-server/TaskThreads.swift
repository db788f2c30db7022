import ArgumentParser
import Logging
import NIOCore
import NIOPosix
import RooftopExecutorHook

/// Where the server's Swift tasks run (`--executor`).
///
/// By default on the event loops: the threads of NIO's singleton group, which read and write
/// every connection (Hummingbird's and PostgreSQL's), become Swift's global executor. A request
/// then runs where its bytes arrived and its answer is written; with Swift's own pool, every
/// request crossed between the two pools at least twice (measured: 4.6–5.6 context switches per
/// `GET` in the server, 1.1 on the event loops; docs/benchmarks.md). What blocks for long does
/// not run on these threads: SQLite's queries and writes run on GRDB's queues, PostgreSQL's
/// blocking sessions and password hashing on thread pools of their own; a point read (a
/// session, a datastore, an object: a few pages) runs on the loop. A task resumed from those
/// queues or pools lands on either loop, and one that sleeps (`Task.sleep`) wakes on Swift's
/// default threads: NIO takes over the executor's queue, not its timers.
///
/// The event loops are installed through the Swift runtime's `swift_task_enqueueGlobal_hook`,
/// as NIO's `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()` does, but
/// named for the linker (`RooftopExecutorHook`) instead of looked up with `dlsym`: a server linked
/// with the Swift runtime statically (the Docker image) keeps the symbol out of its dynamic table,
/// where NIO's lookup found nothing. When the hook cannot be set (another is set already, or a
/// compiler past the versions whose hook this matches), tasks run on the pool
/// (``poolAfterRefusal``, logged as a warning).
///
/// `pool` keeps Swift's default pool (a way back should a dependency block in a task).
enum TaskThreads: Equatable {
    /// NIO's event loops are the global executor.
    case eventLoops
    /// Swift's default pool, as asked.
    case pool
    /// The event loops were asked for but could not be installed; Swift's pool runs the tasks.
    case poolAfterRefusal

    /// Installs the executor `setting` names (`event-loops`, the default, or `pool`); call it
    /// once, before the server makes any task.
    /// - Throws: `ValidationError` for another name.
    static func choose(_ setting: String?) throws -> TaskThreads {
        switch setting ?? "event-loops" {
        case "event-loops":
            return installEventLoops() ? .eventLoops : .poolAfterRefusal
        case "pool":
            return .pool
        default:
            throw ValidationError("the executor is event-loops or pool")
        }
    }

    /// Sends every job queued for Swift's global executor to an event loop of NIO's singleton
    /// group: the current thread's when it is one (`any()`), so that a task resumed on a loop
    /// stays there. The hook's type is the runtime's (`swift_task_enqueueGlobal_hook`: the job,
    /// and the runtime's own enqueue, unused), in Swift's calling convention; NIO's installer makes
    /// the same assumptions, for the same compiler versions.
    private static func installEventLoops() -> Bool {
        #if compiler(<6.6)
        typealias Hook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void
        return withUnsafeTemporaryAllocation(of: Hook.self, capacity: 1) { slot in
            guard let hook = slot.baseAddress else { return false }
            hook.initialize(to: { job, _ in MultiThreadedEventLoopGroup.singleton.any().enqueue(ExecutorJob(job)) })
            return hook.withMemoryRebound(to: UnsafeRawPointer.self, capacity: 1) { function in
                rooftop_install_enqueue_global_hook(UnsafeMutableRawPointer(mutating: function.pointee))
            }
        }
        #else
        return false
        #endif
    }

    /// Says where tasks run (a warning when the event loops could not be installed).
    func log(_ logger: Logger) {
        switch self {
        case .eventLoops:
            logger.info("tasks run on the event loops", metadata: ["threads": "\(NIOSingletons.groupLoopCountSuggestion)"])
        case .pool:
            logger.info("tasks run on Swift's default pool")
        case .poolAfterRefusal:
            logger.warning("the event loops could not become the executor; tasks run on Swift's default pool")
        }
    }
}
