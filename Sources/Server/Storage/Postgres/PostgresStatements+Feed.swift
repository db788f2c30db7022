import PostgresNIO

/// The change feed's numbering on PostgreSQL (docs/server.md, "Changes numbered by transaction,
/// writers at once"): each write transaction numbers its changes in a range that follows its
/// transaction ID, and a pull reads below the range of the oldest writer still running.
extension PostgresStatements {
    /// How many changes one transaction may number: its range (``FeedBase``) is this wide.
    static let changesPerTransaction: Int64 = 1 << 20

    /// The first sequence of the transaction's range of change numbers: the feed's origin (set by
    /// migration v9 above every number given before) plus its transaction ID times
    /// ``changesPerTransaction``. Read by ``LockWrites`` once the transaction's locks are held,
    /// which assigns the transaction its ID if it has none yet. Numbers thus follow transaction
    /// IDs, without a counter every writer takes in turn; a pull reads only changes below
    /// ``feedBound``, which every transaction still running, or starting later, numbers above.
    enum FeedBase {
        static let expression =
            "(SELECT origin FROM feed_origin) + pg_current_xact_id()::text::bigint * \(PostgresStatements.changesPerTransaction)"
    }

    /// What a transaction that may number changes runs first (``PostgresStorage/writeObjects(_:)``):
    /// its connection's `application_name` becomes the deployment's with ` writer` added
    /// (PostgreSQL keeps 63 bytes of it), until the transaction ends, so that ``feedBound`` waits
    /// for it. PostgreSQL clears a transaction's ID before it restores the name.
    static let markWriter: PostgresQuery =
        "SELECT set_config('application_name', current_setting('application_name') || ' writer', true)"

    /// The sequence below which every change of this deployment has committed (or never will),
    /// in the statement's snapshot: the range's base (``FeedBase``) of the oldest transaction the
    /// snapshot saw running, leaving out those now running in a backend that is not one of this
    /// deployment's writers (``markWriter``: another database, deployment, or a transaction that
    /// numbers nothing, such as a datastore's deletion or the statistics' analysis) and prepared
    /// transactions (Rooftop prepares none); the snapshot's end when none is left. A change
    /// numbered below it is in the snapshot; one at or above it may still be coming, from a
    /// transaction older than one that committed already. A transaction the snapshot saw
    /// running that has ended since is kept (its changes are not in the snapshot), and so is one
    /// that runs in a writer: what cannot be told apart is waited for.
    static let feedBound = """
        ((SELECT origin FROM feed_origin) + (SELECT coalesce((SELECT min(x::text::bigint) FROM pg_snapshot_xip(s) AS x \
        WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a \
        WHERE a.backend_xid::text::bigint = x::text::bigint % 4294967296 \
        AND (a.datid IS DISTINCT FROM (SELECT oid FROM pg_database WHERE datname = current_database()) \
        OR a.application_name IS DISTINCT FROM left(current_setting('application_name') || ' writer', 63))) \
        AND NOT EXISTS (SELECT 1 FROM pg_prepared_xacts p WHERE p.transaction::text::bigint = x::text::bigint % 4294967296)), \
        pg_snapshot_xmax(s)::text::bigint) FROM pg_current_snapshot() AS s) * \(changesPerTransaction))
        """
}
