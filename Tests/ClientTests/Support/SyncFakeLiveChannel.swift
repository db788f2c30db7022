@testable import Rooftop
import RooftopShared
import Synchronization
import RooftopTestSupport

/// A live channel the test drives: it emits the signals it is given and records subscriptions.
final class FakeLiveChannel: LiveChannel {
    private let out = Broadcaster<LiveSignal>()
    private let subscriptions = Mutex<[[DatastoreID]]>([])
    private let closed = Mutex(false)

    var subscribed: [[DatastoreID]] { subscriptions.withLock { $0 } }
    var isClosed: Bool { closed.withLock { $0 } }

    func signals() -> AsyncStream<LiveSignal> { out.stream() }

    func subscribe(to datastores: [DatastoreID]) async {
        subscriptions.withLock { $0.append(datastores) }
    }

    func close() async {
        closed.withLock { $0 = true }
        out.finish()
    }

    func emit(_ signal: LiveSignal) { out.publish(signal) }
}

extension SyncEngine {
    /// Waits until continuous sync has no pull running or due.
    func waitForContinuousIdle() async throws {
        guard let sync = continuous.withLock({ $0 }) else { return }
        try await TestWait.until("continuous sync is idle") { await sync.isIdle }
    }
}
