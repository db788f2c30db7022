import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared

/// The operations of one local-store write transaction, over one scope. It records what it
/// touches, which ``LocalStore`` publishes after the commit.
final class StoreTransaction {
    let db: Database
    let scope: String
    /// What this transaction changed: published with its commit.
    var change = StoreChange()
    /// The kept readers (``LocalStore/flagReaders(scope:_:)``) of the scopes written, by scope,
    /// once read or written (`.some(nil)`: none kept).
    var keptReadersRead: [String: Set<String>?] = [:]
    /// The keys of the reader sets written or looked up (``readerSet(_:)``), by their principals.
    var readerSetsRead: [Set<String>: Int64] = [:]
    /// The value-indexed fields of the classes written (``valueIndexedFields(of:)``), once read.
    var indexedFieldsRead: [String: Set<String>?] = [:]
    /// The fields of the classes written that lead a declared index (``leadingFields(of:)``), once read.
    var leadingFieldsRead: [String: Set<String>] = [:]
    /// Writes the declared indexes' entries of the objects stored, and their counts.
    let entries = IndexEntryWriter()

    init(db: Database, scope: String) {
        self.db = db
        self.scope = scope
    }

    /// Ends the transaction's writes: what is summed for later (the declared indexes' key counts,
    /// ``IndexEntryWriter``, and the class counts of inserted objects) is written.
    /// Runs before every commit (``LocalStore/write(scope:_:committed:)``, and each grouped write).
    /// - Throws: GRDB's errors.
    func finish() throws {
        try entries.flushCounts(db)
        try flushClassCounts()
    }

    /// A class in a datastore of the transaction's scope (a `class_counts` row).
    private struct CountedClass: Hashable {
        var datastore: String
        var className: String
    }

    /// Additions to `class_counts` for objects inserted, summed until ``finish()``: a pulled page's
    /// objects share a few classes, and a trigger wrote each class's row once per object (a
    /// statement journal and two statements per insert). Updates and deletes of objects stay
    /// triggers' work (`class_counts_update`, `class_counts_delete`); additions commute with theirs.
    private var classCountsPending: [CountedClass: (live: Int64, readable: Int64)] = [:]

    /// Adds an inserted object to its class's counts. Its class's row is made at once when new
    /// (its trigger makes the class's index partitions, which the object's entries need).
    /// - Throws: GRDB's errors.
    private func countInserted(_ key: ObjectKey, live: Bool, readable: Bool) throws {
        let counted = CountedClass(datastore: key.datastore.rawValue, className: key.className)
        if classCountsPending[counted] == nil {
            try db.cachedStatement(
                sql: """
                    INSERT INTO class_counts (scope, datastore, class_name, live, readable) SELECT ?, ?, ?, 0, 0
                    WHERE NOT EXISTS (SELECT 1 FROM class_counts WHERE scope = ? AND datastore = ? AND class_name = ?)
                    """
            ).execute(arguments: [scope, counted.datastore, counted.className, scope, counted.datastore, counted.className])
        }
        classCountsPending[counted, default: (0, 0)].live += live ? 1 : 0
        classCountsPending[counted, default: (0, 0)].readable += readable ? 1 : 0
    }

    /// Writes the class counts summed so far (``countInserted(_:live:readable:)``).
    /// - Throws: GRDB's errors.
    private func flushClassCounts() throws {
        guard !classCountsPending.isEmpty else { return }
        let add = try db.cachedStatement(
            sql: """
                UPDATE class_counts SET live = live + ?, readable = readable + ?
                WHERE scope = ? AND datastore = ? AND class_name = ?
                """)
        for (counted, added) in classCountsPending where added != (0, 0) {
            try add.execute(arguments: [added.live, added.readable, scope, counted.datastore, counted.className])
        }
        classCountsPending = [:]
    }

    /// Records what another transaction over the same connection touched (a grouped write's,
    /// ``LocalStore/writeGrouped(scope:_:committed:)``), published with this one's.
    func record(_ other: StoreChange) {
        change.objects.formUnion(other.objects)
        change.datastores.formUnion(other.datastores)
        change.outbox = change.outbox || other.outbox
    }

    /// The readers the scope's `readable` flags are kept for, read once per transaction.
    func keptReaders() throws -> Set<String>? {
        if let kept = keptReadersRead[scope] { return kept }
        let readers = try LocalStore.flagReaders(scope: scope, db)
        keptReadersRead[scope] = .some(readers)
        return readers
    }

    /// The key of the reader set of `readers` (`objects.readers`), stored when new: a set is stored
    /// once, however many objects share it (``SQLIndexLayout/Readers/sets``), and looked up once
    /// per transaction. Sets no object names any more stay (as many as the ACLs ever stored).
    /// - Throws: GRDB's errors.
    func readerSet(_ readers: Set<String>) throws -> Int64 {
        if let known = readerSetsRead[readers] { return known }
        let text = SQLIndexRows.readerSetText(readers)
        let id: Int64
        if let stored = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM reader_sets WHERE principals = ?"), arguments: [text])
        {
            id = stored
        } else {
            try db.cachedStatement(sql: "INSERT INTO reader_sets (principals) VALUES (?)").execute(arguments: [text])
            id = db.lastInsertedRowID
            let member = try db.cachedStatement(sql: "INSERT INTO reader_set_members (reader_set, principal) VALUES (?, ?)")
            for principal in readers { try member.execute(arguments: [id, principal]) }
        }
        readerSetsRead[readers] = id
        return id
    }

    // MARK: Objects

    /// An object's row (``StoreTransaction/object(_:scope:_:)``).
    func object(_ key: ObjectKey) throws -> LocalObjectRow? {
        try StoreTransaction.object(key, scope: scope, db)
    }

    /// Writes an object's server state and local view.
    /// - Parameters:
    ///   - fresh: The object has no row yet (nothing of it to replace in the index).
    ///   - synced: Pins it with ``LocalStore/syncLabel`` too (`false` leaves that label as it is).
    ///   - prepared: The preparation of `server`, which is then also `local` (``PreparedObject``).
    ///   - previous: The object's local view before this write, when the caller read it in this
    ///     transaction and it was not deleted (its index rows are then updated from it, not read).
    func put(
        _ key: ObjectKey, server: ObjectSnapshot?, local: ObjectSnapshot?, deleted: Bool, fresh: Bool = false,
        synced: Bool = false, prepared: PreparedObject? = nil, previous: ObjectSnapshot? = nil
    ) throws {
        assert(prepared.map { $0.snapshot == server && local == server } ?? true, "a preparation of another state")
        // Most objects have no queued change: their local view is the server state, stored once;
        // one with changes queued has its view whole and its server state as a delta from it
        // (``StoredForm``).
        let (form, serverText, localText) = try StoredForm.texts(server: server, local: local, serverText: prepared?.text)
        // A write of one object (not a pulled page's, whose objects are many and seldom read at
        // once) leaves its view decoded for the next read: the state the text was encoded from
        // (the server's when the two are stored as one), unless it holds JSON, which may decode
        // to a value only `==` holds equal (``Value/holdsJSON``).
        if prepared == nil {
            let (state, text) = form == .localIsServer ? (server, serverText) : (local, localText)
            if let state, let text, !state.holdsJSON { SnapshotDecodeCache.remember(state, as: text) }
        }
        // Bound directly (``DirectStatement``): a pull runs it for every object it stores.
        let columns =
            "(scope, datastore, class_name, object_id, server, local, local_is_server, deleted, readable, synced, readers)"
        // A deleted object has no readers (and is never read through its flag).
        let readers = deleted ? nil : local.map { prepared?.readers ?? SQLIndexRows.readers(of: $0.acl) }
        let readable = try readers.map { try readableFlag($0) } ?? false
        let readerSet = try readers.map { try self.readerSet($0) }
        let bindState = { (values: inout DirectStatement.Binder) in
            values.bind(serverText)
            values.bind(localText)
            values.bind(form.rawValue)
            values.bind(deleted)
            values.bind(readable)
            values.bind(synced)
            values.bind(readerSet)
        }
        let bindKey = { (values: inout DirectStatement.Binder) in values.bind(scope: self.scope, key) }
        // A fresh object (most of an initial sync) is a plain insert whose key is the row ID it
        // gets (`RETURNING` made SQLite open and close a scratch table per row, a third of the
        // insert); an object that may be stored is updated, and inserted when it was not. Its
        // class's counts are summed by the transaction (``finish()``), not by a trigger per row.
        let insert = { () throws -> Int64? in
            do {
                try DirectStatement(
                    self.db.cachedStatement(sql: "INSERT INTO objects \(columns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                ).execute { values in
                    bindKey(&values)
                    bindState(&values)
                }
            } catch let error as DatabaseError
                where [.SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY].contains(error.extendedResultCode)
            {
                // Stored after all (IDs that Swift holds equal, as canonically equivalent text,
                // and SQLite tells apart, byte by byte): stored as an object that has a row.
                return nil
            }
            try self.countInserted(key, live: !deleted, readable: !deleted && readable)
            return self.db.lastInsertedRowID
        }
        let update = { () throws -> Int64? in
            // An object stored before may have entries, which this write moves or takes away (its
            // readable flag, its keys): the counts summed so far are written first.
            try self.entries.flushCounts(self.db)
            // Its key looked up, then its row updated by key: an update `RETURNING` its key had
            // SQLite collect the returned row in a scratch table (a third of a queued save's
            // update, more than the lookup costs).
            guard
                let objectKey = try DirectStatement(
                    self.db.cachedStatement(
                        sql: "SELECT key FROM objects WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id = ?")
                ).fetchInteger(bindKey)
            else { return nil }
            // Most updates (a queued save, an acknowledgement) leave the object's flags and readers
            // as they were: its row is rewritten without them. Named in an `UPDATE`, a column's
            // indexes are rewritten and its triggers run even when its value stays: three of the
            // seven pages a queued save wrote were `objects_by_class` and `objects_by_readers`.
            try DirectStatement(
                self.db.cachedStatement(
                    sql: """
                        UPDATE objects SET server = ?, local = ?, local_is_server = ?, synced = max(synced, ?)
                        WHERE key = ? AND deleted = ? AND readable = ? AND readers IS ?
                        """)
            ).execute { values in
                values.bind(serverText)
                values.bind(localText)
                values.bind(form.rawValue)
                values.bind(synced)
                values.bind(objectKey)
                values.bind(deleted)
                values.bind(readable)
                values.bind(readerSet)
            }
            guard self.db.changesCount == 0 else { return objectKey }
            try DirectStatement(
                self.db.cachedStatement(
                    sql: """
                        UPDATE objects SET server = ?, local = ?, local_is_server = ?, deleted = ?, readable = ?,
                            synced = max(synced, ?), readers = ?
                        WHERE key = ?
                        """)
            ).execute { values in
                bindState(&values)
                values.bind(objectKey)
            }
            return objectKey
        }
        var objectKey: Int64?
        var fresh = fresh
        if fresh {
            objectKey = try insert()
            if objectKey == nil {
                fresh = false
                objectKey = try update()
            }
        } else {
            objectKey = try update()
            if objectKey == nil {
                objectKey = try insert()
                fresh = objectKey != nil
            }
        }
        guard let objectKey else {
            throw RooftopError(.cache, "the local datastore did not return the key of an object it stored")
        }
        let indexed = try deleted ? nil : local.map { try valueIndexedFields(of: $0.className) }
        let leading = try deleted ? nil : local.map { try leadingFields(of: $0.className) }
        try StoreTransaction.index(
            objectKey: objectKey, local: deleted ? nil : local, replacing: !fresh, indexed: indexed, leading: leading,
            prepared: prepared, entries: EntryTarget(writer: entries, key: key, scope: scope, readable: readable),
            previous: previous, db)
        touch(key)
    }

    /// Removes an object and its pins (a purge: deleted on the server, or access lost). Its
    /// queued mutations stay: the server answers them (a refusal is set aside for the app).
    func remove(_ key: ObjectKey) throws {
        let arguments: StatementArguments = [scope, key.datastore.rawValue, key.className, key.objectId]
        try indexFields(key, local: nil)
        try db.executeCached(
            sql: "DELETE FROM objects WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id = ?",
            arguments: arguments)
        try db.executeCached(
            sql: "DELETE FROM pins WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id = ?",
            arguments: arguments)
        touch(key)
    }

    /// Removes the object's row when nothing keeps it: no label and no queued mutation.
    /// - Parameter queueEmpty: The caller knows the object has no queued mutation.
    func collectGarbage(_ key: ObjectKey, queueEmpty: Bool = false) throws {
        let kept = try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM pins WHERE scope = ?1 AND datastore = ?2 AND class_name = ?3 AND object_id = ?4)
                        OR EXISTS (SELECT 1 FROM objects
                            WHERE scope = ?1 AND datastore = ?2 AND class_name = ?3 AND object_id = ?4 AND synced = 1)
                    """),
            arguments: [scope, key.datastore.rawValue, key.className, key.objectId]) ?? true
        guard !kept else { return }
        guard try queueEmpty || queued(for: key).isEmpty else { return }
        try remove(key)
    }

    // MARK: Pins

    /// Pins an object with a label (the object must be stored). ``LocalStore/syncLabel`` is the
    /// object row's `synced` column, not a `pins` row; ``LocalStore/pendingLabel`` is read from
    /// the queue (an object has it while it has queued changes), and pinning with it does nothing.
    func pin(_ key: ObjectKey, label: String) throws {
        if label == LocalStore.syncLabel {
            try setSynced(key, true)
        } else if label == LocalStore.pendingLabel {
            // Read from the queue.
        } else {
            try db.cachedStatement(
                sql: "INSERT OR IGNORE INTO pins (scope, label, datastore, class_name, object_id) VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: [scope, label, key.datastore.rawValue, key.className, key.objectId])
        }
        touch(key)
    }

    /// Removes one label from an object, and the object when nothing keeps it any more
    /// (``LocalStore/pendingLabel`` is read from the queue: only the garbage collection is done).
    func unpin(_ key: ObjectKey, label: String) throws {
        if label == LocalStore.syncLabel {
            try setSynced(key, false)
        } else if label == LocalStore.pendingLabel {
            // Read from the queue.
        } else {
            try db.cachedStatement(
                sql: "DELETE FROM pins WHERE scope = ? AND label = ? AND datastore = ? AND class_name = ? AND object_id = ?"
            ).execute(arguments: [scope, label, key.datastore.rawValue, key.className, key.objectId])
        }
        touch(key)
        try collectGarbage(key)
    }

    private func setSynced(_ key: ObjectKey, _ synced: Bool) throws {
        try db.cachedStatement(
            sql: "UPDATE objects SET synced = ? WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id = ?"
        ).execute(arguments: [synced, scope, key.datastore.rawValue, key.className, key.objectId])
    }

    /// Removes a label from every object that has it; returns those objects.
    @discardableResult
    func unpinAll(label: String) throws -> [ObjectKey] {
        let sql =
            switch label {
            case LocalStore.syncLabel: "SELECT datastore, class_name, object_id FROM objects WHERE scope = ? AND synced = 1"
            case LocalStore.pendingLabel: "SELECT DISTINCT datastore, class_name, object_id FROM outbox WHERE scope = ?"
            default: "SELECT datastore, class_name, object_id FROM pins WHERE scope = ? AND label = ?"
            }
        let keys = try Row.fetchAll(
            db, sql: sql, arguments: LocalStore.isDerived(label) ? [scope] : [scope, label]
        ).compactMap(StoreTransaction.key)
        for key in keys { try unpin(key, label: label) }
        return keys
    }

    /// The labels of an object.
    func labels(of key: ObjectKey) throws -> [String] {
        try StoreTransaction.labels(of: key, scope: scope, db)
    }

    // MARK: Helpers

    /// Notes that `key`'s object changed in this transaction (published with its commit).
    func touch(_ key: ObjectKey) {
        change.objects.insert(key)
        change.datastores.insert(key.datastore)
    }
}
