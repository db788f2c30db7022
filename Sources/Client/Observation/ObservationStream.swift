import Logging
import RooftopShared

/// Builds the streams behind ``RooftopObject/changes`` and ``RooftopQuery/changes()``: a value
/// read at once, then read again after each relevant change — a store commit, or a live
/// object's edit (unsaved changes, a new base) — and yielded when it differs from the last one.
///
/// Bursts of changes coalesce: while a read runs, further changes leave one pending re-read.
/// The output keeps only the newest value for a slow consumer (observers want the current
/// state, not every step). Everything stops when the consumer stops iterating (its task is
/// cancelled or it drops the stream) or the client shuts down: the store's stream then ends.
enum ObservationStream {
    /// The stream.
    /// - Parameters:
    ///   - core: The client whose changes are watched.
    ///   - isRelevant: Whether a change may affect the value.
    ///   - read: Reads the value now; a read that throws is skipped (the next change reads again).
    ///   - identity: What tells two values apart; equal identities are not yielded twice in a row.
    static func make<Element: Sendable, Identity: Equatable & Sendable>(
        core: ClientCore,
        isRelevant: @escaping @Sendable (StoreChange) -> Bool,
        read: @escaping @Sendable () throws -> Element,
        identity: @escaping @Sendable (Element) -> Identity
    ) -> AsyncStream<Element> {
        // Subscribed before returning, so that no change between now and the first read is lost.
        let storeChanges = core.store.changes.stream()
        let edits = core.edits.stream()
        let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (output, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let storeTask = Task {
            for await change in storeChanges where isRelevant(change) { signal.yield() }
            // The store closed: the client shut down.
            signal.finish()
        }
        let editTask = Task {
            for await change in edits where isRelevant(change) { signal.yield() }
        }
        let readTask = Task {
            var last: Identity?
            func emit() {
                let value: Element
                do {
                    value = try read()
                } catch {
                    // The stream cannot carry errors: the next change tries again.
                    ClientCore.logger.error(
                        "an observation could not read the local datastore; its next change reads again",
                        metadata: ["error": "\(error)"])
                    return
                }
                let current = identity(value)
                guard current != last else { return }
                last = current
                continuation.yield(value)
            }
            emit()
            for await _ in signals { emit() }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            storeTask.cancel()
            editTask.cancel()
            readTask.cancel()
        }
        return output
    }
}
