import RooftopShared

extension Datastore {
    /// The datastore's objects as they change locally: one element per change, holding the keys
    /// of the objects of this datastore whose local state changed — saved, queued, edited but
    /// unsaved, brought by a sync, deleted, purged. Elements that would be empty (changes of
    /// other datastores) are skipped. Ends when the consumer stops iterating or the client shuts
    /// down.
    ///
    /// ```swift
    /// let notes = try await client.datastores.open(.default)
    /// for await changed in notes.changes {
    ///     reload(changed.map(\.objectId))
    /// }
    /// ```
    public var changes: AsyncStream<Set<ObjectKey>> {
        let id = self.id
        // Subscribed now, so that nothing between this call and the first iteration is lost.
        let sources = [core.store.changes.stream(), core.edits.stream()]
        let (output, continuation) = AsyncStream<Set<ObjectKey>>.makeStream(bufferingPolicy: .unbounded)
        let forwarders = sources.map { source in
            Task {
                for await change in source {
                    let keys = change.objects.filter { $0.datastore == id }
                    if !keys.isEmpty { continuation.yield(keys) }
                }
                // A source ends when the client shuts down.
                continuation.finish()
            }
        }
        continuation.onTermination = { _ in
            for forwarder in forwarders { forwarder.cancel() }
        }
        return output
    }
}
