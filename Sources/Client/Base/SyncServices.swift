import RooftopShared
import Synchronization

/// The sync machinery of one client: the offline queue's engine, the sync engine and what they
/// share (merge decisions, the queue's memory, datastore activity). ``ClientCore`` holds one; the
/// engines are made on first use and hold the core weakly.
final class SyncServices: Sendable {
    /// Merge decisions from pushes and rebases.
    let merges = Broadcaster<MergeEvent>()
    /// Acknowledgements and folds remembered in memory.
    let ledger = OutboxLedger()
    /// Per-datastore activity, for statuses.
    let activity = DatastoreActivity()

    private struct Engines {
        var outbox: OutboxEngine?
        var sync: SyncEngine?
        var random: @Sendable () -> Double = { Double.random(in: 0..<1) }
        var channelFactory: (@Sendable () throws(RooftopError) -> any LiveChannel)?
    }

    private let engines = Mutex(Engines())

    /// The offline queue's engine (started on first use).
    func outbox(_ core: ClientCore) -> OutboxEngine {
        let (engine, made) = engines.withLock { engines -> (OutboxEngine, Bool) in
            if let existing = engines.outbox { return (existing, false) }
            let engine = OutboxEngine(core: core, random: engines.random)
            engines.outbox = engine
            return (engine, true)
        }
        if made { engine.start() }
        return engine
    }

    /// The sync engine.
    func sync(_ core: ClientCore) -> SyncEngine {
        engines.withLock { engines in
            if let existing = engines.sync { return existing }
            let engine = SyncEngine(core: core)
            engines.sync = engine
            return engine
        }
    }

    /// The source of retry jitter (values in 0..<1).
    var random: @Sendable () -> Double { engines.withLock { $0.random } }

    /// Replaces the source of retry jitter (values in 0..<1); tests inject a fixed one. Takes
    /// effect for an engine made afterwards.
    func setRandomSource(_ random: @escaping @Sendable () -> Double) {
        engines.withLock { $0.random = random }
    }

    /// Makes continuous sync's channels (the live WebSocket connection); without one, continuous
    /// sync polls.
    func setChannelFactory(_ factory: @escaping @Sendable () throws(RooftopError) -> any LiveChannel) {
        engines.withLock { $0.channelFactory = factory }
    }

    /// A new channel for continuous sync: a live connection when the client has one, else `nil`.
    func makeChannel() throws(RooftopError) -> (any LiveChannel)? {
        guard let factory = engines.withLock({ $0.channelFactory }) else { return nil }
        return try factory()
    }

    /// Stops the engines and ends the streams.
    func shutdown() async {
        let (outbox, sync) = engines.withLock { ($0.outbox, $0.sync) }
        await sync?.stop()
        await outbox?.stop()
        merges.finish()
        activity.changes.finish()
    }
}

extension ClientCore {
    /// The offline queue's engine.
    var outboxEngine: OutboxEngine { services.outbox(self) }
    /// The sync engine.
    var syncEngine: SyncEngine { services.sync(self) }
}
