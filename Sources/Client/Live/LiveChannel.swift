import RooftopShared
import Synchronization

/// What continuous sync hears from the server. The shape of the live connection's events
/// (`LiveConnection`, over the `/v1/live` WebSocket), so that it plugs in through a small
/// adapter.
enum LiveSignal: Sendable, Equatable {
    /// The connection is up (again): what was missed must be pulled, the queue resumed.
    case connected
    /// The connection went down (it reconnects by itself).
    case disconnected
    /// The server confirmed the subscriptions.
    case subscribed([DatastoreID])
    /// A change the user may read was committed in a datastore (its sequence number, if known).
    case changed(DatastoreID, sequence: Int64?)
    /// The server reported an error (the connection stays).
    case error(RooftopError)
}

/// A source of ``LiveSignal``s for continuous sync: the live WebSocket connection, or polling.
protocol LiveChannel: Sendable {
    /// The signals from now on; one stream per call, ending when the channel closes.
    func signals() -> AsyncStream<LiveSignal>
    /// Asks for `changed` signals of these datastores (replacing earlier subscriptions).
    func subscribe(to datastores: [DatastoreID]) async
    /// Closes the channel; its streams end.
    func close() async
}

/// A channel without a server connection: it announces every subscribed datastore as changed at
/// a fixed interval on the configured clock, so that continuous sync polls. It never says
/// `connected`: without a connection, the status follows the outcome of each request. Used when
/// no live connection is available.
final class PollingChannel: LiveChannel {
    private let interval: Duration
    private let clock: EngineClock
    private let signalsOut = Broadcaster<LiveSignal>()
    private struct State {
        var datastores: [DatastoreID] = []
        var ticker: Task<Void, Never>?
    }
    private let state = Mutex(State())

    /// A channel that announces changes every `interval`.
    init(interval: Duration, clock: EngineClock) {
        self.interval = interval
        self.clock = clock
    }

    func signals() -> AsyncStream<LiveSignal> { signalsOut.stream() }

    func subscribe(to datastores: [DatastoreID]) async {
        let start = state.withLock { state in
            state.datastores = datastores
            return state.ticker == nil
        }
        signalsOut.publish(.subscribed(datastores))
        guard start else { return }
        let ticker = Task { [weak self, clock, interval] in
            var next = clock.nowMillis()
            while !Task.isCancelled {
                next += EngineClock.milliseconds(interval)
                do { try await clock.sleepUntilMillis(next) } catch { return }
                guard let self else { return }
                for datastore in self.state.withLock({ $0.datastores }) {
                    self.signalsOut.publish(.changed(datastore, sequence: nil))
                }
            }
        }
        state.withLock { $0.ticker = ticker }
    }

    func close() async {
        state.withLock { $0.ticker }?.cancel()
        signalsOut.finish()
    }
}
