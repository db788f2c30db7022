import GRDB

/// The local store's schema, as versioned migrations registered in order.
enum LocalStoreMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: objects, pins, outbox, checkpoints, session") { db in
            try db.execute(sql: """
                CREATE TABLE objects (
                    scope TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    class_name TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    server TEXT,
                    local TEXT,
                    deleted INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (scope, datastore, class_name, object_id)
                );
                CREATE INDEX objects_by_class ON objects(scope, class_name);

                CREATE TABLE pins (
                    scope TEXT NOT NULL,
                    label TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    class_name TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    PRIMARY KEY (scope, label, datastore, class_name, object_id)
                );
                CREATE INDEX pins_by_object ON pins(scope, datastore, class_name, object_id);

                CREATE TABLE query_cache (
                    scope TEXT NOT NULL,
                    hash TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    objects TEXT NOT NULL,
                    total_count INTEGER NOT NULL,
                    fetched_at INTEGER NOT NULL,
                    PRIMARY KEY (scope, hash)
                );

                CREATE TABLE outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    scope TEXT NOT NULL,
                    mutation_id TEXT NOT NULL UNIQUE,
                    datastore TEXT NOT NULL,
                    class_name TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    mutation TEXT NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    next_attempt_at INTEGER,
                    created_at INTEGER NOT NULL
                );
                CREATE INDEX outbox_by_object ON outbox(scope, datastore, class_name, object_id);

                CREATE TABLE rejected (
                    mutation_id TEXT PRIMARY KEY,
                    scope TEXT NOT NULL,
                    mutation TEXT NOT NULL,
                    error TEXT NOT NULL,
                    local_state TEXT,
                    rejected_at INTEGER NOT NULL
                );

                CREATE TABLE checkpoints (
                    scope TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    checkpoint TEXT NOT NULL,
                    PRIMARY KEY (scope, datastore)
                );

                CREATE TABLE session (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    body TEXT NOT NULL
                );

                CREATE TABLE datastores (
                    scope TEXT NOT NULL,
                    id TEXT NOT NULL,
                    info TEXT NOT NULL,
                    PRIMARY KEY (scope, id)
                );
                """)
        }
        registerSyncMigrations(&migrator)
        migrator.registerMigration("v3: an object's labels from one covering index") { db in
            // Looking up an object's labels (every pull, save and unpin does) used the primary
            // key's covering index, which leads with the label: a scan of every pin of the user,
            // so a pull slowed down with each object stored. This index answers it directly.
            try db.execute(sql: """
                DROP INDEX pins_by_object;
                CREATE INDEX pins_by_object ON pins(scope, datastore, class_name, object_id, label);
                """)
        }
        migrator.registerMigration("v4: local field index") { db in
            // Local queries read only the objects their conditions can match (FieldIndexPlan).
            try db.execute(sql: """
                CREATE TABLE local_fields (
                    scope TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    class_name TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    field TEXT NOT NULL,
                    sort_key BLOB
                );
                CREATE INDEX local_fields_by_value ON local_fields(scope, datastore, class_name, field, sort_key);
                CREATE INDEX local_fields_by_object ON local_fields(scope, datastore, class_name, object_id);
                """)
            // Filled no more: v5 replaces this index (and builds its own) right after.
        }
        migrator.registerMigration("v5: the server's index layout") { db in
            // Local queries compile to SQL with the server's compiler (SQLQueryCompiler), over the
            // same tables: objects get an integer key, and the index holds every field's key and
            // kind, list elements, coordinates and readers. The v4 index is replaced. Each object's
            // `readable` flag is computed by the first query (no `readable_for` record yet).
            try db.execute(sql: """
                CREATE TABLE objects_v5 (
                    key INTEGER PRIMARY KEY,
                    scope TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    class_name TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    server TEXT,
                    local TEXT,
                    deleted INTEGER NOT NULL DEFAULT 0,
                    readable INTEGER NOT NULL DEFAULT 0,
                    UNIQUE (scope, datastore, class_name, object_id)
                );
                INSERT INTO objects_v5 (scope, datastore, class_name, object_id, server, local, deleted)
                    SELECT scope, datastore, class_name, object_id, server, local, deleted FROM objects;
                DROP TABLE objects;
                ALTER TABLE objects_v5 RENAME TO objects;
                CREATE INDEX objects_by_class ON objects(scope, datastore, class_name, deleted, readable);
                DROP TABLE local_fields;
                CREATE TABLE readable_for (scope TEXT PRIMARY KEY, principals TEXT NOT NULL);

                CREATE TABLE object_fields (
                    object_key INTEGER NOT NULL,
                    field TEXT NOT NULL,
                    kind INTEGER NOT NULL,
                    sort_key BLOB,
                    latitude REAL,
                    longitude REAL,
                    complete INTEGER NOT NULL,
                    PRIMARY KEY (object_key, field)
                ) WITHOUT ROWID;
                CREATE INDEX object_fields_by_value ON object_fields(field, sort_key);
                CREATE INDEX object_fields_incomplete ON object_fields(field, object_key) WHERE complete = 0;
                CREATE TABLE object_elements (
                    object_key INTEGER NOT NULL,
                    field TEXT NOT NULL,
                    element_key BLOB NOT NULL,
                    PRIMARY KEY (object_key, field, element_key)
                ) WITHOUT ROWID;
                CREATE INDEX object_elements_by_value ON object_elements(field, element_key);
                CREATE TABLE object_readers (
                    object_key INTEGER NOT NULL,
                    principal TEXT NOT NULL,
                    PRIMARY KEY (object_key, principal)
                ) WITHOUT ROWID;
                CREATE INDEX object_readers_by_principal ON object_readers(principal, object_key);
                """)
            try StoreTransaction.indexAll(db)
        }
        migrator.registerMigration("v6: the sync label and unchanged local views in the objects row, class counts") { db in
            // An initial sync wrote three rows per object keyed by its random ID besides the
            // object's own (the `_sync` pin and its index entry), and the object's JSON twice
            // (server state and local view, the same text when nothing is queued). The label is
            // now the `synced` column, and a local view equal to the server state is not stored
            // again (`local_is_server`). A refusal records the changes a rebase folded into the
            // refused one (`rejected.folded`), which share its fate.
            try db.execute(sql: """
                ALTER TABLE objects ADD COLUMN synced INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE objects ADD COLUMN local_is_server INTEGER NOT NULL DEFAULT 0;
                UPDATE objects SET synced = 1 WHERE EXISTS (
                    SELECT 1 FROM pins p WHERE p.scope = objects.scope AND p.label = '\(LocalStore.syncLabel)'
                        AND p.datastore = objects.datastore AND p.class_name = objects.class_name
                        AND p.object_id = objects.object_id);
                DELETE FROM pins WHERE label = '\(LocalStore.syncLabel)';
                UPDATE objects SET local = NULL, local_is_server = 1 WHERE server IS NOT NULL AND local = server;
                ALTER TABLE rejected ADD COLUMN folded TEXT;
                """)
            // A class's count without a condition (`count()`, a full page's total) was a walk of
            // its index entries: 168 ms at a million objects. Triggers keep per-class counts of
            // the live objects and of those readable by the kept readers (`readable = 1`),
            // through every write path. (A trigger's row is added with `WHERE NOT EXISTS`: an
            // `OR IGNORE` inside a trigger takes the conflict policy of the upsert that fired it.)
            try db.execute(sql: """
                CREATE TABLE class_counts (
                    scope TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    class_name TEXT NOT NULL,
                    live INTEGER NOT NULL,
                    readable INTEGER NOT NULL,
                    PRIMARY KEY (scope, datastore, class_name)
                ) WITHOUT ROWID;
                INSERT INTO class_counts (scope, datastore, class_name, live, readable)
                    SELECT scope, datastore, class_name, sum(deleted = 0), sum(deleted = 0 AND readable = 1)
                    FROM objects GROUP BY scope, datastore, class_name;
                CREATE TRIGGER class_counts_insert AFTER INSERT ON objects BEGIN
                    \(classCount(of: "new", adding: true))
                END;
                CREATE TRIGGER class_counts_delete AFTER DELETE ON objects BEGIN
                    \(classCount(of: "old", adding: false))
                END;
                CREATE TRIGGER class_counts_update AFTER UPDATE OF scope, datastore, class_name, deleted, readable ON objects
                WHEN old.scope != new.scope OR old.datastore != new.datastore OR old.class_name != new.class_name
                    OR old.deleted != new.deleted OR old.readable != new.readable
                BEGIN
                    \(classCount(of: "old", adding: false))
                    \(classCount(of: "new", adding: true))
                END;
                """)
        }
        registerIndexMigrations(&migrator)
        migrator.registerMigration("v15: the queue's order without AUTOINCREMENT") { db in
            // `AUTOINCREMENT` kept the queue's last row ID in `sqlite_sequence`: a page of every
            // queued save's five (its row, the queue's row and two indexes). A plain row ID is
            // one more than the largest in the table, so a new row still comes after every row
            // queued; an ID is reused only after its row left the queue, and nothing remembers a
            // row's ID past the transaction that read it. The table is rebuilt, rows and IDs kept.
            try db.execute(sql: """
                CREATE TABLE outbox_v15 (
                    seq INTEGER PRIMARY KEY,
                    scope TEXT NOT NULL,
                    mutation_id TEXT NOT NULL UNIQUE,
                    datastore TEXT NOT NULL,
                    class_name TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    mutation TEXT NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    next_attempt_at INTEGER,
                    created_at INTEGER NOT NULL
                );
                INSERT INTO outbox_v15 (
                    seq, scope, mutation_id, datastore, class_name, object_id, mutation, state, attempts, last_error,
                    next_attempt_at, created_at)
                    SELECT seq, scope, mutation_id, datastore, class_name, object_id, mutation, state, attempts, last_error,
                        next_attempt_at, created_at
                    FROM outbox;
                DROP TABLE outbox;
                ALTER TABLE outbox_v15 RENAME TO outbox;
                CREATE INDEX outbox_by_object ON outbox(scope, datastore, class_name, object_id);
                """)
        }
        migrator.registerMigration("v16: entries of the elements of lists that lead an index") { db in
            // `tags contains ?` found its objects among the `tags` element rows of every class
            // and scope, then looked each up to test its class, scope, liveness and readability:
            // at a million objects its total count alone took 30 ms. An index led by a field now
            // also has an entry per element of that field's lists (``SQLCompoundIndex/elementEntries``,
            // partition negated), flagged readable like the index's own; the field's element rows
            // leave the value index, as its field rows did in v14. Statements of its own, as the
            // tables stand at v16.
            try db.execute(sql: """
                UPDATE object_elements SET by_value = 0
                WHERE by_value = 1 AND EXISTS (
                    SELECT 1 FROM objects o JOIN class_indexes d ON d.class_name = o.class_name
                    WHERE o.key = object_elements.object_key AND d.field1 = object_elements.field);
                INSERT OR IGNORE INTO index_entries (partition, k1, k2, k3, k4, object_key, readable)
                    SELECT -p.id, e.element_key, c.k2, c.k3, c.k4, c.object_key, c.readable
                    FROM index_entries c
                    JOIN index_partitions p ON p.id = c.partition
                    JOIN class_indexes d ON d.id = p.class_index
                    JOIN object_elements e ON e.object_key = c.object_key AND e.field = d.field1;
                """)
        }
        migrator.registerMigration("v17: bulk loads") { db in
            // An initial sync writes its objects without the declared indexes' entries, which a
            // pass builds every so many objects in one sorted insert (``LocalStore/BulkLoading``):
            // one row per datastore being loaded so, whose objects from `built_to` on (by row
            // key) have no entries yet.
            try db.execute(sql: """
                CREATE TABLE bulk_loads (
                    scope TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    built_to INTEGER NOT NULL,
                    PRIMARY KEY (scope, datastore)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v18: folds kept with the row they were folded into") { db in
            // A pull's rebase folds an object's later queued rows into its first (``Rebase``),
            // whose answer becomes theirs. Which rows were folded was kept in memory only: after
            // a restart a refusal or acknowledgement of the first row was not told to the others,
            // nor did their status read it. The first row now lists them (a JSON array of
            // mutation IDs; `NULL` for none), and so does its refusal (`rejected.folded`, v6).
            // The rows that list folds are indexed apart (a status looks there for an ID the
            // queue has no row of); a row that lists none costs the index nothing.
            try db.execute(sql: """
                ALTER TABLE outbox ADD COLUMN folded TEXT;
                CREATE INDEX outbox_folding ON outbox(scope) WHERE folded IS NOT NULL;
                """)
        }
        migrator.registerMigration("v19: server states kept as deltas from the view") { _ in
            // From here on an object with queued changes may have `local_is_server = 2`: its view
            // whole in `local`, its server state in `server` as a delta from the view
            // (``StoredForm/serverAsDelta``). Nothing is rewritten (rows of forms 0 and 1 read as
            // before and take the new form at their next write); the migration marks the format,
            // so that a build that does not know it refuses the store (``LocalStore``) instead
            // of reading a delta as an object.
        }
        migrator.registerMigration("v20: the pending label read from the queue") { db in
            // An object is pinned with `_pending` while it has queued changes: the label is now
            // read from the queue (``LocalStore/pendingLabel``), and its rows go.
            try db.execute(sql: "DELETE FROM pins WHERE label = '\(LocalStore.pendingLabel)'")
        }
        return migrator
    }

    /// The statements of a `class_counts` trigger that add (`adding`) the row `row` (`new` or
    /// `old`) to its class's counts, or take it away; a class is given its row when first counted.
    private static func classCount(of row: String, adding: Bool) -> String {
        let sign = adding ? "+" : "-"
        let matches = "scope = \(row).scope AND datastore = \(row).datastore AND class_name = \(row).class_name"
        let create =
            adding
            ? "INSERT INTO class_counts SELECT \(row).scope, \(row).datastore, \(row).class_name, 0, 0"
                + " WHERE NOT EXISTS (SELECT 1 FROM class_counts WHERE \(matches));"
            : ""
        return create + " UPDATE class_counts SET live = live \(sign) (\(row).deleted = 0),"
            + " readable = readable \(sign) (\(row).deleted = 0 AND \(row).readable = 1) WHERE \(matches);"
    }
}
