/// How both backends sweep mutation results (``RetentionStorage/sweepHistory(cutoff:now:)``): in key
/// order, a batch per transaction, with no index on their age (it would cost every push).
enum ResultSweep {
    /// A position in the results' key order.
    typealias Key = (scope: String, id: String)

    /// Calls `batch` with the key after which to go on (first `("", "")`: mutation IDs are never
    /// empty, so every row sorts after it) until it reports no last key; returns the total
    /// removed.
    /// - Parameter batch: Deletes the expired results among the next batch of keys after the one
    ///   given; returns the batch's last key (`nil` when there were none) and how many it removed.
    /// - Throws: What `batch` throws.
    static func run(_ batch: (Key) async throws -> (last: Key?, removed: Int)) async throws -> Int {
        var deleted = 0
        var after: Key = ("", "")
        while true {
            let (last, removed) = try await batch(after)
            deleted += removed
            guard let last else { return deleted }
            after = last
        }
    }
}
