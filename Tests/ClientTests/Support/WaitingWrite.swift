import Foundation
@testable import Rooftop
import Synchronization

/// A write that asks for the writer from inside a pull's transaction, at its first change: it
/// runs `write` on a thread of its own, which waits for the writer (counted by
/// ``LocalStore/writesWaiting``) while the pull's transaction goes on; ``ran`` is signalled once
/// it has run.
final class WaitingWrite: Sendable {
    let ran = DispatchSemaphore(value: 0)
    private let asked = Mutex(false)
    private let store: LocalStore
    private let write: @Sendable () -> Void

    init(_ store: LocalStore, _ write: @escaping @Sendable () -> Void) {
        self.store = store
        self.write = write
    }

    /// The pull's change observer that starts the write.
    var observer: SyncEngine.ChangeObserver {
        { [self] _, _ in start() }
    }

    private func start() {
        let first = asked.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        Thread.detachNewThread { [self] in
            write()
            ran.signal()
        }
        let deadline = Date().addingTimeInterval(10)
        while !store.writesWaiting && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
    }
}
