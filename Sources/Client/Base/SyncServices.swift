import RooftopShared
import Synchronization

/// What the offline queue's engine and the sync engine work with, handed to them when they are
/// made: the local store, the server's API, the live instances, the account, and what the two
/// share (the queue's memory of acknowledgements, merge decisions, datastore activity). Nothing
/// here leads back to the ``ClientCore`` that made them.
struct EngineDependencies: Sendable {
    let store: LocalStore
    let api: RemoteAPI
    /// Live instances, whose bases follow what the engines store.
    let registry: ObjectRegistry
    let account: Account
    /// Acknowledgements and folds remembered in memory.
    let ledger = OutboxLedger()
    /// Merge decisions from pushes and rebases.
    let merges = Broadcaster<MergeEvent>()
    /// Per-datastore activity, for statuses.
    let activity = DatastoreActivity()
    /// The clock and the retry policy of the engines' waits.
    let configuration: ClientConfiguration
    /// The source of retry jitter (values in 0..<1); tests inject a fixed one.
    let random: @Sendable () -> Double

    /// The signed-in user's scope of local rows (`""` without an account).
    var scope: String { account.scope }
}

/// The sync machinery of one client: the offline queue's engine, the sync engine and their
/// ``EngineDependencies``. ``ClientCore`` makes and holds one.
final class SyncServices: Sendable {
    /// Makes a live connection for continuous sync, signed with the client's session tokens.
    typealias LiveChannelFactory = @Sendable (SessionTokenStore) throws(RooftopError) -> any LiveChannel

    /// What the engines work with.
    let dependencies: EngineDependencies
    /// The offline queue's engine (``start()`` starts its loop).
    let outbox: OutboxEngine
    /// The sync engine.
    let sync: SyncEngine

    /// The engines over `dependencies`; the queue's engine wakes on `outboxSignals`, and
    /// continuous sync connects with `liveChannel` (polls without one).
    init(
        _ dependencies: EngineDependencies, outboxSignals: AsyncStream<Void>,
        liveChannel: (@Sendable () throws(RooftopError) -> any LiveChannel)?
    ) {
        self.dependencies = dependencies
        outbox = OutboxEngine(dependencies, signals: outboxSignals)
        sync = SyncEngine(dependencies, outbox: outbox, liveChannel: liveChannel)
    }

    /// Acknowledgements and folds remembered in memory.
    var ledger: OutboxLedger { dependencies.ledger }
    /// Per-datastore activity, for statuses.
    var activity: DatastoreActivity { dependencies.activity }

    /// Starts the offline queue's engine (once).
    func start() { outbox.start() }

    /// Stops the engines and ends the streams (again: nothing more).
    func shutdown() async {
        await sync.close()
        await outbox.stop()
        dependencies.merges.finish()
        dependencies.activity.changes.finish()
    }
}

extension ClientCore {
    /// The offline queue's engine.
    var outboxEngine: OutboxEngine { services.outbox }
    /// The sync engine.
    var syncEngine: SyncEngine { services.sync }
}
