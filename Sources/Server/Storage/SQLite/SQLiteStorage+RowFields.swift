import Foundation
import GRDB
import Logging
import RooftopSQL
import RooftopSQLite
import RooftopShared
import Synchronization

extension SQLiteStorage {
    /// The row-keeping state of `className` (``RowFields``), as of `db`'s transaction.
    /// - Throws: GRDB errors; a decoding error for a state not written by this code.
    static func rowFields(of className: String, _ db: Database) throws -> RowFields {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT written, complete, rebuilt_to FROM class_rows WHERE class_name = ?"),
                arguments: [className])
        else { return .every }
        return RowFields(
            written: try RowFields.fields(row[0]), complete: try RowFields.fields(row[1]), rebuiltTo: row[2])
    }

    /// Saves the row-keeping state of `className` (none kept for ``RowFields/every``).
    static func saveRowFields(_ state: RowFields, of className: String, _ db: Database) throws {
        guard state != .every else {
            return try db.execute(sql: "DELETE FROM class_rows WHERE class_name = ?", arguments: [className])
        }
        let text = { (fields: Set<String>?) in fields.map(RowFields.text) }
        try db.execute(
            sql: """
                INSERT INTO class_rows (class_name, written, complete, rebuilt_to) VALUES (?, ?, ?, ?)
                ON CONFLICT (class_name) DO UPDATE SET
                written = excluded.written, complete = excluded.complete, rebuilt_to = excluded.rebuilt_to
                """,
            arguments: [className, text(state.written), text(state.complete), state.rebuiltTo])
    }

    /// Applies a class's declared indexes to what its objects keep rows of, in the transaction
    /// that saves them: fields no longer declared stop being read at once; a rebuild is due when
    /// the fields kept change (``startRowRebuild()``). Returns whether it is.
    /// - Throws: GRDB errors.
    static func declareRowFields(_ settings: ClassSettings, _ db: Database) throws -> Bool {
        let current = try rowFields(of: settings.className, db)
        guard let next = current.declaring(RowFields.declared(by: settings.indexes)) else { return false }
        try saveRowFields(next, of: settings.className, db)
        if let complete = next.complete {
            // The counts of values too long to index are the rows' own: a field leaving
            // `complete` loses them, and the rebuild counts those it adds again.
            let kept = SQLTextSet.list(complete, dialect: .sqlite)
            try db.execute(
                sql: "DELETE FROM unindexed_fields WHERE class_name = ? AND field NOT IN (\(kept.sql))",
                arguments: StatementArguments([settings.className] + kept.arguments))
        }
        return next.rebuiltTo != nil
    }

    /// Rebuilds the rows of the next batch of objects of a class whose rows are being rebuilt
    /// (``RowFields``), in one write transaction. Returns whether a rebuild is still under way.
    ///
    /// A batch reads the class's objects in key order past `rebuilt_to`, and stops at whichever
    /// comes first: ``RowRebuild/batch`` objects, ``RowRebuild/batchBytes`` of their bodies, or
    /// ``RowRebuild/span`` keys scanned (a small class in a large table is found by a walk of
    /// the table's keys: a batch walks a bounded part of it).
    /// - Parameter skipping: Classes not to rebuild now (their batches failed).
    /// - Throws: ``RowRebuildFailure`` naming the class whose batch failed.
    func rebuildRowsBatch(skipping: Set<String> = []) async throws -> Bool {
        let rebuild = rowRebuild
        let skipped = SQLTextSet.list(skipping, dialect: .sqlite)
        let condition = skipping.isEmpty ? "" : " AND class_name NOT IN (\(skipped.sql))"
        let pending = "SELECT class_name FROM class_rows WHERE rebuilt_to IS NOT NULL\(condition)"
        return try await pool.write { db in
            guard
                let className = try String.fetchOne(
                    db, sql: pending + " ORDER BY class_name LIMIT 1", arguments: StatementArguments(skipped.arguments))
            else { return false }
            let goesOn: Bool
            do {
                goesOn = try Self.rebuildRows(of: className, rebuild, db)
            } catch {
                throw RowRebuildFailure(className: className, error: error)
            }
            return try goesOn
                || Bool.fetchOne(db, sql: "SELECT EXISTS (\(pending))", arguments: StatementArguments(skipped.arguments))
                ?? false
        }
    }

    /// Rebuilds the next batch of `className`'s objects; returns whether its rebuild goes on.
    private static func rebuildRows(of className: String, _ rebuild: RowRebuild, _ db: Database) throws -> Bool {
        let state = try Self.rowFields(of: className, db)
        guard let rebuiltTo = state.rebuiltTo, let complete = state.complete else {
            // Every field complete: nothing to rebuild.
            try Self.saveRowFields(RowFields(written: state.written, complete: state.written), of: className, db)
            return false
        }
        let upper = rebuild.upperKey(after: rebuiltTo)
        let objects = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT key, datastore_key, body, deleted, created_at, updated_at FROM objects
                    WHERE class_name = ? AND key > ? AND key <= ? ORDER BY key LIMIT ?
                    """),
            arguments: [className, rebuiltTo, upper, rebuild.batch])
        // Rows of other fields go, built-in ones included (`objectId` never has rows).
        let kept = SQLTextSet.list(complete, dialect: .sqlite)
        var (count, bytes, last) = (0, 0, rebuiltTo)
        while count < rebuild.batch, bytes < rebuild.batchBytes, let object = try objects.next() {
            let key: Int64 = object[0]
            for table in SQLiteStorage.valueRowTables {
                try db.cachedStatement(sql: "DELETE FROM \(table) WHERE object_key = ? AND field NOT IN (\(kept.sql))")
                    .execute(arguments: StatementArguments([key] + kept.arguments))
            }
            if (object[3] as Int64) == 0 {
                let body: String = object[2]
                bytes += body.utf8.count
                let snapshot = try RowFields.rebuilt(className: className, body: body, createdAt: object[4], updatedAt: object[5])
                try Self.addRows(
                    of: snapshot, beyond: state, className: className, objectKey: key, datastoreKey: object[1], db)
            }
            (count, last) = (count + 1, key)
        }
        let end = try Int64.fetchOne(db, sql: "SELECT max(key) FROM objects") ?? 0
        let next = rebuild.advanced(state, count: count, bytes: bytes, last: last, upper: upper, end: end)
        try Self.saveRowFields(next, of: className, db)
        return next.rebuiltTo != nil
    }

    /// Adds an object's rows (and counts) of the fields `state` keeps behind its rebuild but not
    /// yet for objects ahead of it: `written` less `complete`. The rebuild does so for each object
    /// it passes, and a writer for a new object whose key is behind it (SQLite gives a new row
    /// the largest key plus one: when the objects with the largest keys were deleted, a key the
    /// rebuild has passed comes again).
    /// `object`'s fields and its dates (`createdAt`, `updatedAt`) are what may get rows.
    static func addRows(
        of object: ObjectSnapshot, beyond state: RowFields, className: String, objectKey: Int64, datastoreKey: Int64,
        _ db: Database
    ) throws {
        guard let rows = state.addedRows(of: object) else { return }
        try insertRows(rows.added, objectKey: objectKey, datastoreKey: datastoreKey, className: className, db)
        try countUnindexed(rows.unindexed, datastoreKey: datastoreKey, className: className, db)
    }

    /// Inserts the `object_fields` rows of an object of `className` in `datastoreKey`, and the
    /// `object_elements` rows of their elements, in its partition (``partition(datastoreKey:className:_:)``).
    /// - Parameter partition: The partition, when the caller knows it; looked up (and made when
    ///   needed) otherwise.
    static func insertRows(
        _ rows: [SQLIndexRows.FieldRow], objectKey: Int64, datastoreKey: Int64, className: String,
        partition known: Int64? = nil, _ db: Database
    ) throws {
        guard !rows.isEmpty else { return }
        let partition = try known ?? partition(datastoreKey: datastoreKey, className: className, db)
        // Bound directly (``DirectStatement``): every field of every object a push writes.
        let fields = try DirectStatement(
            db.cachedStatement(
                sql: """
                    INSERT INTO object_fields (object_key, field, kind, sort_key, latitude, longitude, partition)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """))
        for row in rows {
            try fields.execute { values in
                values.bind(row, of: objectKey)
                values.bind(partition)
            }
            guard !row.elements.isEmpty else { continue }
            let elements = try DirectStatement(
                db.cachedStatement(
                    sql: "INSERT OR IGNORE INTO object_elements (object_key, field, element_key, partition) VALUES (?, ?, ?, ?)"))
            for element in row.elements {
                try elements.execute { values in
                    values.bind(objectKey)
                    values.bind(row.field)
                    values.bind(element)
                    values.bind(partition)
                }
            }
        }
    }

    /// The partition of the objects of `className` in `datastoreKey`: the key their rows carry in
    /// the value indexes, which lead with it (``SQLQueryCompiler/valuePartition``), made on first
    /// use. Read in the writer's own transaction; a push's writes keep it for the transaction,
    /// forgotten when a savepoint rolls back (``SQLiteObjectWriter/ReadAhead/partition(datastoreKey:className:find:)``).
    static func partition(datastoreKey: Int64, className: String, _ db: Database) throws -> Int64 {
        if let key = try existingPartition(datastoreKey: datastoreKey, className: className, db) { return key }
        try db.cachedStatement(sql: "INSERT INTO object_partitions (datastore_key, class_name) VALUES (?, ?)")
            .execute(arguments: [datastoreKey, className])
        return db.lastInsertedRowID
    }

    /// The partition of the objects of `className` in `datastoreKey`, `nil` when none has rows.
    static func existingPartition(datastoreKey: Int64, className: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT key FROM object_partitions WHERE datastore_key = ? AND class_name = ?"),
            arguments: [datastoreKey, className])
    }

    /// Adds to the counts of objects per field whose values the index does not fully store.
    static func countUnindexed(
        _ deltas: [(field: String, delta: Int64)], datastoreKey: Int64, className: String, _ db: Database
    ) throws {
        for (field, delta) in deltas {
            try db.cachedStatement(
                sql: """
                    INSERT INTO unindexed_fields (datastore_key, class_name, field, objects) VALUES (?, ?, ?, ?)
                    ON CONFLICT (datastore_key, class_name, field) DO UPDATE SET objects = objects + excluded.objects
                    """
            ).execute(arguments: [datastoreKey, className, field, delta])
        }
    }
}
