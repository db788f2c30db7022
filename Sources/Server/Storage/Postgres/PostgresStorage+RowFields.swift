import Logging
import PostgresNIO
import RooftopSQL
import RooftopShared

/// Which fields of a class have index rows on PostgreSQL (``RowFields``, the rule both backends
/// follow): a class that declares indexes keeps rows only of the fields they name; its queries
/// read those rows, the objects' columns for `objectId`, `createdAt` and `updatedAt`, and leave
/// conditions on and orders by its other fields to the shared evaluator
/// (``SQLQueryCompiler/isUnreadable(_:)``).
///
/// Writers run at once here, so a batch of the background rebuild excludes the class's writers:
/// every write transaction holds a shared advisory lock on each class it writes (taken with its
/// datastores' locks, before its objects', ``PostgresStatements/LockWrites``) and reads the
/// class's state after it; a batch takes the lock exclusively. A batch therefore never passes an
/// object a writer is writing with the state before it, and a new object's key (the identity's
/// next) is always past the rebuild, which has read every committed key of the class.
extension PostgresStorage {
    /// The row-keeping state of `className` (``RowFields``), as the statement sees it.
    /// - Throws: What the database answers; a decoding error for a state not written by this code.
    static func rowFields(of className: String, _ session: PostgresBlockingSession) throws -> RowFields {
        guard
            let row = try session.query(
                "SELECT written, complete, rebuilt_to FROM class_rows WHERE class_name = \(className)"
            ).first
        else { return .every }
        let (written, complete, rebuiltTo) = try row.decode((String?, String?, Int64?).self)
        return RowFields(written: try RowFields.fields(written), complete: try RowFields.fields(complete), rebuiltTo: rebuiltTo)
    }

    /// Saves the row-keeping state of `className` (none kept for ``RowFields/every``).
    /// - Throws: What the database answers.
    static func saveRowFields(_ state: RowFields, of className: String, _ session: PostgresBlockingSession) throws {
        guard state != .every else {
            try session.execute("DELETE FROM class_rows WHERE class_name = \(className)")
            return
        }
        let (written, complete) = (state.written.map(RowFields.text), state.complete.map(RowFields.text))
        try session.execute(
            """
            INSERT INTO class_rows (class_name, written, complete, rebuilt_to)
            VALUES (\(className), \(written), \(complete), \(state.rebuiltTo))
            ON CONFLICT (class_name) DO UPDATE SET
            written = excluded.written, complete = excluded.complete, rebuilt_to = excluded.rebuilt_to
            """)
    }

    /// Applies a class's declared indexes to what its objects keep rows of, in the transaction
    /// that saves them (``SQLiteStorage/declareRowFields(_:_:)``'s rule). A writer still writing
    /// with the state before it would keep rows of at least the fields complete after it; the
    /// class's lock is taken (waiting for its writers) only when the fields change, so that two
    /// declarations of a class apply one after the other, each from the state the last left.
    /// Returns whether a rebuild is due.
    /// - Throws: What the database answers.
    static func declareRowFields(_ settings: ClassSettings, seed: Int64, _ session: PostgresBlockingSession) throws -> Bool {
        let declared = RowFields.declared(by: settings.indexes)
        guard try rowFields(of: settings.className, session).declaring(declared) != nil else { return false }
        try lockClass(settings.className, seed: seed, session)
        let current = try rowFields(of: settings.className, session)
        guard let next = current.declaring(declared) else { return false }
        try saveRowFields(next, of: settings.className, session)
        if let complete = next.complete {
            // The counts of values too long to index are the rows' own: a field leaving
            // `complete` loses them, and the rebuild counts those it adds again.
            try session.execute(
                """
                DELETE FROM unindexed_fields WHERE class_name = \(settings.className)
                AND field <> ALL(\(complete.sorted())::text[])
                """)
        }
        return next.rebuiltTo != nil
    }

    /// Takes a class's lock exclusively until the transaction ends: its writers hold it shared
    /// (the same key, ``PostgresStatements/LockWrites``).
    /// - Throws: What the database answers.
    static func lockClass(_ className: String, seed: Int64, _ session: PostgresBlockingSession) throws {
        try session.execute("SELECT pg_advisory_xact_lock(hashtextextended('c' || \(className), \(seed)))")
    }

    /// Rebuilds the rows of the next batch of objects of a class whose rows are being rebuilt
    /// (``RowFields``), in one transaction that excludes the class's writers. Returns whether a
    /// rebuild is still under way.
    /// - Parameter skipping: Classes not to rebuild now (their batches failed).
    /// - Throws: ``RowRebuildFailure`` naming the class whose batch failed.
    func rebuildRowsBatch(skipping: Set<String> = []) async throws -> Bool {
        let rebuild = rowRebuild
        let seed = try await lockSeed()
        let skipped = skipping.sorted()
        return try await transaction { session in
            guard
                let className = try session.query(
                    """
                    SELECT class_name FROM class_rows WHERE rebuilt_to IS NOT NULL AND class_name <> ALL(\(skipped)::text[])
                    ORDER BY class_name LIMIT 1
                    """
                ).first?.decode(String.self)
            else { return false }
            let goesOn: Bool
            do {
                goesOn = try Self.rebuildRows(of: className, rebuild, seed: seed, session)
            } catch {
                throw RowRebuildFailure(className: className, error: error)
            }
            return try goesOn
                || session.query(
                    """
                    SELECT 1 FROM class_rows WHERE rebuilt_to IS NOT NULL AND class_name <> ALL(\(skipped)::text[])
                    LIMIT 1
                    """
                ).first != nil
        }
    }

    /// Rebuilds the next batch of `className`'s objects; returns whether its rebuild goes on.
    private static func rebuildRows(
        of className: String, _ rebuild: RowRebuild, seed: Int64, _ session: PostgresBlockingSession
    ) throws -> Bool {
        // The class's writers excluded until commit; its state read after they have committed.
        try lockClass(className, seed: seed, session)
        let state = try rowFields(of: className, session)
        guard let rebuiltTo = state.rebuiltTo, let complete = state.complete else {
            try saveRowFields(RowFields(written: state.written, complete: state.written), of: className, session)
            return false
        }
        let upper = rebuild.upperKey(after: rebuiltTo)
        let rows = try session.query(
            """
            SELECT key, datastore_key, body, deleted, created_at, updated_at FROM objects
            WHERE class_name = \(className) AND key > \(rebuiltTo) AND key <= \(upper) ORDER BY key LIMIT \(Int64(rebuild.batch))
            FOR KEY SHARE
            """)
        var (keys, bytes, last) = ([Int64](), 0, rebuiltTo)
        var added: [(key: Int64, row: SQLIndexRows.FieldRow)] = []
        var unindexed: [RebuildCount: Int64] = [:]
        for row in rows {
            let (key, datastoreKey, body, deleted, createdAt, updatedAt) = try row.decode(
                (Int64, Int64, String, Bool, Int64?, Int64?).self)
            keys.append(key)
            last = key
            bytes += body.utf8.count
            if !deleted {
                let snapshot = try RowFields.rebuilt(className: className, body: body, createdAt: createdAt, updatedAt: updatedAt)
                if let change = state.addedRows(of: snapshot) {
                    added += change.added.map { (key, $0) }
                    for (field, delta) in change.unindexed {
                        unindexed[RebuildCount(datastoreKey: datastoreKey, field: field), default: 0] += delta
                    }
                }
            }
            if bytes >= rebuild.batchBytes { break }
        }
        // Rows of other fields go, built-in ones included (`objectId` never has rows).
        let kept = complete.sorted()
        for table in ["object_elements", "object_fields"] {
            try session.execute(
                PostgresQuery(
                    unsafeSQL: "DELETE FROM \(table) WHERE object_key = ANY($1::bigint[]) AND field <> ALL($2::text[])",
                    binds: {
                        var bindings = PostgresBindings(capacity: 2)
                        bindings.append(keys)
                        bindings.append(kept)
                        return bindings
                    }()))
        }
        try insert(added, session)
        let counts = unindexed.filter { $0.value != 0 }.sorted { ($0.key.datastoreKey, $0.key.field) < ($1.key.datastoreKey, $1.key.field) }
        if !counts.isEmpty {
            try session.execute(
                """
                INSERT INTO unindexed_fields (datastore_key, class_name, field, objects)
                SELECT u.datastore_key, \(className), u.field, u.objects
                FROM unnest(\(counts.map(\.key.datastoreKey))::bigint[], \(counts.map(\.key.field))::text[],
                \(counts.map(\.value))::bigint[]) AS u(datastore_key, field, objects)
                ON CONFLICT (datastore_key, class_name, field) DO UPDATE SET objects = unindexed_fields.objects + excluded.objects
                """)
        }
        let end = try session.query("SELECT coalesce(max(key), 0) FROM objects").first?.decode(Int64.self) ?? 0
        let next = rebuild.advanced(state, count: keys.count, bytes: bytes, last: last, upper: upper, end: end)
        try saveRowFields(next, of: className, session)
        return next.rebuiltTo != nil
    }

    /// A count of values too long to index a rebuild adds, by datastore and field.
    private struct RebuildCount: Hashable {
        var datastoreKey: Int64
        var field: String
    }

    /// Inserts the rows a rebuild adds, with their elements' rows, in one statement.
    private static func insert(_ rows: [(key: Int64, row: SQLIndexRows.FieldRow)], _ session: PostgresBlockingSession) throws {
        guard !rows.isEmpty else { return }
        _ = try session.run(PostgresStatements.InsertIndexRows(rows: rows))
    }
}
