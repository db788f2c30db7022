import Logging
import Synchronization

/// Keeps the planner's statistics of the object tables current while they grow fast.
///
/// PostgreSQL's autovacuum analyzes a table once a tenth of it changed, but looks at each
/// database only once a minute (`autovacuum_naptime`): a datastore loaded in bulk is queried
/// meanwhile with the statistics of an empty table, and the planner then loops over every object
/// for every index row (a `category =` query on 20,000 fresh objects took 14 s instead of 20 ms).
/// So each server process counts the object writes it committed and, once they reach the number
/// of objects the last analysis counted (and at least ``minimumChanges``), runs `ANALYZE` on
/// those tables in the background, one at a time: while a datastore is loaded, each time the
/// tables may have doubled. An analysis samples at most 30,000 rows of each table (the default
/// statistics target, about 0.3 s for the five tables at 20,000 objects here), so analyses cost
/// a bounded share of the writes however large the tables grow; past that, autovacuum's own
/// (a tenth changed) keeps them current.
final class PostgresStatistics: Sendable {
    /// Writes committed before the first analysis, and at least between two.
    static let minimumChanges: Int64 = 1_000

    /// The tables queries read, analyzed together; with the mutations' results, which every push
    /// looks up by the IDs it carries (``PostgresStatements/RecordedResults``): without their
    /// statistics the plan a connection cached while the table was small read every result of the
    /// caller's scope and tested each against the IDs, a cost growing with every push.
    static let tables = "objects, object_fields, object_elements, object_readers, reader_set_members, mutation_results"

    private struct State {
        /// Object writes committed since the last analysis started.
        var changed: Int64 = 0
        /// The objects the last analysis counted (at least the writes committed before it: where
        /// the analysis cannot count them, a role that may not analyze, the schedule still doubles).
        var objects: Int64 = 0
        /// Every object write committed.
        var writes: Int64 = 0
        /// The analysis running, if any.
        var running: Task<Void, Never>?
        var closed = false
    }

    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Counts `writes` object writes committed, and starts `analyze` in the background when they
    /// bring the changes past the threshold and no analysis is running. `analyze` answers the
    /// number of objects it counted.
    func committed(_ writes: Int, analyze: @escaping @Sendable () async throws -> Int64) {
        guard writes > 0 else { return }
        state.withLock { state in
            state.changed += Int64(writes)
            state.writes += Int64(writes)
            guard !state.closed, state.running == nil,
                state.changed >= max(Self.minimumChanges, state.objects)
            else { return }
            state.changed = 0
            let floor = state.writes
            let logger = self.logger
            state.running = Task {
                var counted: Int64?
                do {
                    counted = try await analyze()
                } catch {
                    logger.warning("updating the planner's statistics failed: \(error)")
                }
                self.state.withLock { state in
                    state.objects = max(counted ?? 0, floor)
                    state.running = nil
                }
            }
        }
    }

    /// Whether an analysis is running (for tests).
    var isAnalyzing: Bool { state.withLock { $0.running != nil } }

    /// Starts no more analyses, and waits for the one running.
    func close() async {
        let running = state.withLock { state in
            state.closed = true
            return state.running
        }
        await running?.value
    }
}
