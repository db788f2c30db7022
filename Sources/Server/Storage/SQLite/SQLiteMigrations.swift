import GRDB
import RooftopShared

/// The SQLite schema, as versioned migrations registered in order. A migration, once released,
/// never changes: later changes are new migrations.
enum SQLiteMigrations {
    /// The migrations among `applied` (what a file records) that this version does not have:
    /// a newer server's, in `applied`'s order. Start-up refuses such a file
    /// (``SQLiteStorage/prepare()``), and so does a backup's check (``SQLiteBackup/verify(_:)``).
    static func unknown(_ applied: some Sequence<String>) -> [String] {
        let known = Set(migrator.migrations)
        return applied.filter { !known.contains($0) }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: accounts, datastores, objects, change feed") { db in
            try db.execute(sql: """
                CREATE TABLE settings (
                    name TEXT PRIMARY KEY,
                    value BLOB NOT NULL
                );

                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    username TEXT NOT NULL UNIQUE,
                    email TEXT,
                    password_hash TEXT NOT NULL,
                    created_at INTEGER NOT NULL
                );

                CREATE TABLE sessions (
                    token_hash TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                );
                CREATE INDEX sessions_by_expiry ON sessions(expires_at);

                CREATE TABLE roles (
                    name TEXT PRIMARY KEY,
                    acl TEXT NOT NULL,
                    created_at INTEGER NOT NULL
                );
                CREATE TABLE role_users (
                    role TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    PRIMARY KEY (role, user_id)
                );
                CREATE TABLE role_children (
                    role TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
                    child TEXT NOT NULL,
                    PRIMARY KEY (role, child)
                );

                -- scope is the owner's user ID for private datastores and '' otherwise, so that
                -- each user has their own 'default' while shareable IDs stay globally unique.
                CREATE TABLE datastores (
                    key INTEGER PRIMARY KEY,
                    id TEXT NOT NULL,
                    scope TEXT NOT NULL,
                    owner_id TEXT,
                    title TEXT,
                    created_at INTEGER NOT NULL,
                    sequence INTEGER NOT NULL DEFAULT 0,
                    record_count INTEGER NOT NULL DEFAULT 0,
                    size_bytes INTEGER NOT NULL,
                    UNIQUE (scope, id)
                );
                CREATE TABLE datastore_roles (
                    datastore_key INTEGER NOT NULL REFERENCES datastores(key) ON DELETE CASCADE,
                    principal TEXT NOT NULL,
                    role TEXT NOT NULL,
                    PRIMARY KEY (datastore_key, principal)
                );
                CREATE INDEX datastore_roles_by_principal ON datastore_roles(principal);

                CREATE TABLE class_settings (
                    class_name TEXT PRIMARY KEY,
                    settings TEXT NOT NULL
                );

                -- One row per object, tombstones included. body holds fields, ACL and field
                -- versions as portable JSON; sequence is the datastore sequence of the last change.
                CREATE TABLE objects (
                    key INTEGER PRIMARY KEY,
                    datastore_key INTEGER NOT NULL REFERENCES datastores(key) ON DELETE CASCADE,
                    class_name TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    body TEXT NOT NULL,
                    created_at INTEGER,
                    updated_at INTEGER,
                    version INTEGER NOT NULL,
                    sequence INTEGER NOT NULL,
                    deleted INTEGER NOT NULL DEFAULT 0,
                    size_bytes INTEGER NOT NULL,
                    UNIQUE (datastore_key, class_name, object_id)
                );
                CREATE INDEX objects_by_sequence ON objects(datastore_key, sequence);

                -- Order-preserving keys (Value.sortKey) of every field of live objects, built-in
                -- fields included, so SQL compares values exactly as the shared evaluator does.
                CREATE TABLE object_fields (
                    object_key INTEGER NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                    field TEXT NOT NULL,
                    kind INTEGER NOT NULL,
                    sort_key BLOB NOT NULL,
                    latitude REAL,
                    longitude REAL,
                    PRIMARY KEY (object_key, field)
                );
                CREATE INDEX object_fields_by_value ON object_fields(field, sort_key);

                -- Keys of list elements and relation members, for 'contains'.
                CREATE TABLE object_elements (
                    object_key INTEGER NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                    field TEXT NOT NULL,
                    element_key BLOB NOT NULL
                );
                CREATE INDEX object_elements_by_object ON object_elements(object_key, field);
                CREATE INDEX object_elements_by_value ON object_elements(field, element_key);

                -- Who could read each object, and from/until which datastore sequence: the
                -- current readers have no to_sequence. The history answers "what did this user
                -- lose access to" after role or ACL changes.
                CREATE TABLE object_readers (
                    object_key INTEGER NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                    principal TEXT NOT NULL,
                    from_sequence INTEGER NOT NULL,
                    to_sequence INTEGER
                );
                CREATE INDEX object_readers_current ON object_readers(object_key, principal)
                    WHERE to_sequence IS NULL;
                CREATE INDEX object_readers_by_principal ON object_readers(principal, object_key);

                -- Each committed change, to merge pushes based on older versions field by field.
                CREATE TABLE object_operations (
                    object_key INTEGER NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                    version INTEGER NOT NULL,
                    operation TEXT NOT NULL,
                    PRIMARY KEY (object_key, version)
                );

                -- The first result of every mutation ID, per user: a retried push is answered
                -- from here and never applied twice.
                CREATE TABLE mutations (
                    scope TEXT NOT NULL,
                    mutation_id TEXT NOT NULL,
                    result TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (scope, mutation_id)
                );
                """)
        }
        migrator.registerMigration("v2: datastore keys are never reused") { db in
            // Checkpoints carry the datastore's key. SQLite gives a new row max(key) + 1, so a
            // datastore created after the newest one was deleted got its key, and an old
            // checkpoint resumed the new datastore's feed. Keys now come from an AUTOINCREMENT
            // table, which never hands out a key twice; it starts above every existing key.
            try db.execute(sql: """
                CREATE TABLE datastore_keys (key INTEGER PRIMARY KEY AUTOINCREMENT);
                INSERT INTO datastore_keys (key) SELECT max(key) FROM datastores HAVING max(key) IS NOT NULL;
                DELETE FROM datastore_keys;
                """)
        }
        migrator.registerMigration("v3: object readers indexed by object") { db in
            // Loading an object reads all its reader rows (`WHERE object_key = ?`, current and
            // former). Neither earlier index serves that: one is partial (current readers only),
            // the other leads with the principal. Every object load scanned the whole table, so
            // pulls, query pages and updates slowed down linearly with the number of objects.
            // The index also serves the ON DELETE CASCADE from objects.
            try db.execute(sql: "CREATE INDEX object_readers_by_object ON object_readers(object_key)")
        }
        migrator.registerMigration("v4: compact mutation results, bounded and clustered indexes") { db in
            // Each record was stored about five times: a push kept every mutation's whole result
            // (the object included) and the whole first operation, and the field index held
            // every value at full length, twice (table and index). See docs/server.md, "Storage".
            //
            // 1. A mutation's result is kept as its version, the key of the object it left (so a
            //    retry is answered with the object's current state) and its merges or error.
            //    Results recorded before stay in `mutations` and are answered from there.
            // 2. Index keys longer than `Value.indexedKeyLimit` are not stored (NULL); per class
            //    and field, `unindexed_fields` counts the live objects with such a value (or list
            //    element), so a query knows when SQL alone cannot decide a condition on the field.
            // 3. An object's first operation keeps only which fields it created and its origin
            //    (new writes only): nothing merges over a creation, no base version precedes it.
            // 4. Index tables are clustered on their natural keys (WITHOUT ROWID), which makes
            //    the separate by-object indexes of elements and readers unnecessary.
            let limit = Value.indexedKeyLimit
            try db.execute(sql: """
                CREATE TABLE mutation_results (
                    scope TEXT NOT NULL,
                    mutation_id TEXT NOT NULL,
                    version INTEGER,
                    object_key INTEGER,
                    detail TEXT,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (scope, mutation_id)
                ) WITHOUT ROWID;

                CREATE TABLE unindexed_fields (
                    datastore_key INTEGER NOT NULL REFERENCES datastores(key) ON DELETE CASCADE,
                    class_name TEXT NOT NULL,
                    field TEXT NOT NULL,
                    objects INTEGER NOT NULL,
                    PRIMARY KEY (datastore_key, class_name, field)
                ) WITHOUT ROWID;
                INSERT INTO unindexed_fields (datastore_key, class_name, field, objects)
                    SELECT o.datastore_key, o.class_name, u.field, count(*) FROM (
                        SELECT object_key, field FROM object_fields WHERE length(sort_key) > \(limit)
                        UNION
                        SELECT object_key, field FROM object_elements WHERE length(element_key) > \(limit)
                    ) u JOIN objects o ON o.key = u.object_key
                    GROUP BY o.datastore_key, o.class_name, u.field;

                CREATE TABLE object_fields_v4 (
                    object_key INTEGER NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                    field TEXT NOT NULL,
                    kind INTEGER NOT NULL,
                    sort_key BLOB,
                    latitude REAL,
                    longitude REAL,
                    PRIMARY KEY (object_key, field)
                ) WITHOUT ROWID;
                INSERT INTO object_fields_v4 (object_key, field, kind, sort_key, latitude, longitude)
                    SELECT object_key, field, kind,
                        CASE WHEN length(sort_key) > \(limit) THEN NULL ELSE sort_key END, latitude, longitude
                    FROM object_fields;
                DROP TABLE object_fields;
                ALTER TABLE object_fields_v4 RENAME TO object_fields;
                CREATE INDEX object_fields_by_value ON object_fields(field, sort_key);

                CREATE TABLE object_elements_v4 (
                    object_key INTEGER NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                    field TEXT NOT NULL,
                    element_key BLOB NOT NULL,
                    PRIMARY KEY (object_key, field, element_key)
                ) WITHOUT ROWID;
                INSERT OR IGNORE INTO object_elements_v4 (object_key, field, element_key)
                    SELECT object_key, field, element_key FROM object_elements WHERE length(element_key) <= \(limit);
                DROP TABLE object_elements;
                ALTER TABLE object_elements_v4 RENAME TO object_elements;
                CREATE INDEX object_elements_by_value ON object_elements(field, element_key);

                CREATE TABLE object_readers_v4 (
                    object_key INTEGER NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                    principal TEXT NOT NULL,
                    from_sequence INTEGER NOT NULL,
                    to_sequence INTEGER,
                    PRIMARY KEY (object_key, principal, from_sequence)
                ) WITHOUT ROWID;
                INSERT OR IGNORE INTO object_readers_v4 (object_key, principal, from_sequence, to_sequence)
                    SELECT object_key, principal, from_sequence, to_sequence FROM object_readers;
                DROP TABLE object_readers;
                ALTER TABLE object_readers_v4 RENAME TO object_readers;
                CREATE INDEX object_readers_by_principal ON object_readers(principal, object_key);
                """)
        }
        migrator.registerMigration("v5: bounded history") { db in
            // Nothing kept for sync grows forever (docs/server.md, "Retention"). A sweeper
            // advances each datastore's `history_from`: the sequence at a mark taken at least the
            // retention ago. Tombstones, operations and reader history at or below it are removed,
            // and a checkpoint or base version older than it is answered `historyExpired`.
            // `mark_sequence`/`mark_at` hold the datastore's sequence when the current mark was
            // taken. Operations record the sequence they were committed at (NULL for earlier
            // ones: older than any mark, so the first advance removes them). Mutation results are
            // swept by a scan in key order: an index on their age would cost every push more disk
            // than the hourly scan costs.
            try db.execute(sql: """
                ALTER TABLE datastores ADD COLUMN history_from INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE datastores ADD COLUMN mark_sequence INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE datastores ADD COLUMN mark_at INTEGER;
                ALTER TABLE object_operations ADD COLUMN sequence INTEGER;
                CREATE INDEX objects_tombstones ON objects(datastore_key, sequence) WHERE deleted = 1;
                """)
        }
        migrator.registerMigration("v6: sessions by user") { db in
            // Administration lists and ends a user's sessions (docs/server.md, "Administer a server").
            try db.execute(sql: "CREATE INDEX sessions_by_user ON sessions(user_id, created_at)")
        }
        migrator.registerMigration("v7: deleted role names stay reserved") { db in
            // A deleted role's name is kept, so that no later role of that name inherits the grants
            // naming it (docs/server.md, "Roles"). Names deleted before this migration are not
            // known; those still named by datastore sharing or object readers are reserved now.
            try db.execute(sql: """
                CREATE TABLE retired_roles (
                    name TEXT PRIMARY KEY,
                    retired_at INTEGER NOT NULL
                );
                INSERT OR IGNORE INTO retired_roles (name, retired_at)
                    SELECT DISTINCT substr(principal, 6), CAST(strftime('%s', 'now') AS INTEGER) * 1000
                    FROM (SELECT principal FROM datastore_roles UNION SELECT principal FROM object_readers)
                    WHERE substr(principal, 1, 5) = 'role:' AND substr(principal, 6) NOT IN (SELECT name FROM roles);
                """)
        }
        migrator.registerMigration("v8: dashboard sessions stored as hashes") { db in
            // The dashboard's sessions, by the SHA-256 of their tokens (as users' sessions): the
            // HMAC key that signed them before is no longer kept.
            try db.execute(sql: """
                CREATE TABLE dashboard_sessions (token_hash TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
                DELETE FROM settings WHERE name = 'dashboard-hmac-key';
                """)
        }
        migrator.registerMigration("v9: user names compared by key") { db in
            // User names are compared by a key (SignUpRequest.usernameKey: compatibility-decomposed,
            // case-folded, invisible characters dropped), unique, so that look-alike accounts
            // cannot be made. Existing users whose keys collide all stay: the oldest gets the key,
            // the others the key, U+001F and their ID, and log in by their exact name
            // (UserNameMigration); names are rewritten in NFC where no other user has that form.
            // (The default '' only fills the column until the keys are written: every insert
            // gives a key.)
            try db.execute(sql: "ALTER TABLE users ADD COLUMN name_key TEXT NOT NULL DEFAULT ''")
            let users = try Row.fetchAll(db, sql: "SELECT id, username FROM users ORDER BY created_at, rowid").map {
                UserNameMigration.User(id: $0["id"], username: $0["username"])
            }
            let update = try db.makeStatement(sql: "UPDATE users SET username = ?, name_key = ? WHERE id = ?")
            for user in UserNameMigration.keys(for: users) {
                try update.execute(arguments: [user.username, user.key, user.id])
            }
            try db.execute(sql: "CREATE UNIQUE INDEX users_by_name_key ON users(name_key)")
        }
        migrator.registerMigration("v10: reader sets") { db in
            // A query tested each candidate's readers with a look-up in `object_readers` (a
            // count of 100,000 objects read 100,000 of their rows: 0.1 s). Each distinct set of
            // readers is now stored once, a live object's row names its set (`*` alone when
            // everyone may read it, ``SQLIndexRows/readerSet(of:)``), and a query tests the row's
            // set against its caller's (``SQLiteStorage/readerSets(of:_:)``). `object_readers`
            // stays the readers' history the change feed reads. The sets of the objects stored
            // are made here from their current readers, with the text the writer gives them
            // (``SQLIndexRows/readerSetText(_:)``: a JSON array in byte order).
            try db.execute(sql: """
                CREATE TABLE reader_sets (
                    id INTEGER PRIMARY KEY,
                    principals TEXT NOT NULL UNIQUE
                );
                CREATE TABLE reader_set_members (
                    principal TEXT NOT NULL,
                    reader_set INTEGER NOT NULL REFERENCES reader_sets(id),
                    PRIMARY KEY (principal, reader_set)
                ) WITHOUT ROWID;
                ALTER TABLE objects ADD COLUMN readers INTEGER;
                CREATE TEMP TABLE v10_object_sets (object_key INTEGER PRIMARY KEY, principals TEXT NOT NULL);
                INSERT INTO v10_object_sets (object_key, principals)
                    SELECT object_key,
                    CASE WHEN max(principal = '*') THEN '["*"]' ELSE '[' || group_concat(quoted, ',') || ']' END
                    FROM (
                        SELECT r.object_key, r.principal,
                        '"' || replace(replace(r.principal, '\\', '\\\\'), '"', '\\"') || '"' AS quoted
                        FROM object_readers r JOIN objects o ON o.key = r.object_key
                        WHERE r.to_sequence IS NULL AND o.deleted = 0
                        ORDER BY r.object_key, CAST(r.principal AS BLOB)
                    )
                    GROUP BY object_key;
                INSERT INTO reader_sets (principals) SELECT DISTINCT principals FROM v10_object_sets;
                INSERT OR IGNORE INTO reader_set_members (principal, reader_set)
                    SELECT r.principal, s.id FROM v10_object_sets os
                    JOIN reader_sets s ON s.principals = os.principals
                    JOIN object_readers r ON r.object_key = os.object_key AND r.to_sequence IS NULL
                    WHERE os.principals != '["*"]';
                INSERT OR IGNORE INTO reader_set_members (principal, reader_set)
                    SELECT '*', id FROM reader_sets WHERE principals = '["*"]';
                UPDATE objects SET readers = (
                    SELECT s.id FROM v10_object_sets os JOIN reader_sets s ON s.principals = os.principals
                    WHERE os.object_key = objects.key)
                WHERE deleted = 0;
                DROP TABLE v10_object_sets;
                CREATE INDEX objects_by_readers ON objects(datastore_key, class_name, readers) WHERE deleted = 0;
                """)
        }
        migrator.registerMigration("v11: rows of declared fields") { db in
            // A class that declares indexes keeps index rows only of the fields they name
            // (``RowFields``). Its objects still have rows of every field: a rebuild, started
            // when the storage opens, removes the others batch by batch; until it has passed an
            // object, writers keep that object's rows of the declared fields, which are complete.
            try db.execute(
                sql: """
                    CREATE TABLE class_rows (
                        class_name TEXT PRIMARY KEY,
                        written TEXT,
                        complete TEXT,
                        rebuilt_to INTEGER
                    ) WITHOUT ROWID
                    """)
            let settings = try String.fetchAll(db, sql: "SELECT settings FROM class_settings")
            for text in settings {
                let settings = try DocumentCoding.decode(ClassSettings.self, from: text)
                _ = try SQLiteStorage.declareRowFields(settings, db)
            }
        }
        migrator.registerMigration("v12: built-in fields read from their columns") { db in
            // Queries read `objectId` from the objects' own column, which its unique index finds,
            // and `createdAt` and `updatedAt` from theirs unless the class keeps their rows as it
            // would any field's (``SQLIndexLayout/serverSQLite``): `objectId`'s rows go now; a
            // class that declares indexes starts a rebuild, which removes its dates' rows unless
            // an index names them. (One whose rebuild is under way already removes them from the
            // objects it has still to pass; those it passed keep theirs, unread, until its next.)
            try db.execute(
                sql: """
                    DELETE FROM object_fields WHERE field = 'objectId';
                    UPDATE class_rows SET rebuilt_to = 0 WHERE complete IS NOT NULL AND rebuilt_to IS NULL;
                    """)
        }
        migrator.registerMigration("v13: live objects counted from their indexes") { db in
            // A count read every matching object's row (1.1 KB with its body) for its datastore,
            // class and readers: 5,000 matches of 100,000 objects took 13 ms, and a whole class
            // read each row through `objects_by_readers`, which lacked `deleted`. Both indexes
            // now hold every column a count tests: a count of the whole class reads
            // `objects_by_readers` alone; one of a condition's matches looks each key up in
            // `objects_live_by_key` (7 ms). Inserts add mostly to its end (a new key is one past
            // the largest, which may be one freed by deleting the largest).
            try db.execute(
                sql: """
                    DROP INDEX objects_by_readers;
                    CREATE INDEX objects_by_readers ON objects(datastore_key, class_name, readers, deleted)
                        WHERE deleted = 0;
                    CREATE INDEX objects_live_by_key ON objects(key, datastore_key, class_name, readers, deleted)
                        WHERE deleted = 0;
                    """)
        }
        migrator.registerMigration("v14: value indexes per datastore and class") { db in
            // The value indexes were `(field, sort_key)` over every datastore: a count of
            // `category = ?` in one datastore read the rows of every datastore holding a
            // `category`, and looked each object up to drop the others' (one tenant's data slowed
            // every other's queries). Rows now carry their object's partition, one per datastore
            // and class, and the value indexes lead with it (``SQLQueryCompiler/valuePartition``).
            try db.execute(
                sql: """
                    CREATE TABLE object_partitions (
                        key INTEGER PRIMARY KEY,
                        datastore_key INTEGER NOT NULL REFERENCES datastores(key) ON DELETE CASCADE,
                        class_name TEXT NOT NULL,
                        UNIQUE (datastore_key, class_name)
                    );
                    INSERT INTO object_partitions (datastore_key, class_name)
                        SELECT DISTINCT datastore_key, class_name FROM objects ORDER BY datastore_key, class_name;
                    DROP INDEX object_fields_by_value;
                    DROP INDEX object_elements_by_value;
                    ALTER TABLE object_fields ADD COLUMN partition INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE object_elements ADD COLUMN partition INTEGER NOT NULL DEFAULT 0;
                    UPDATE object_fields SET partition = (
                        SELECT p.key FROM objects o JOIN object_partitions p
                        ON p.datastore_key = o.datastore_key AND p.class_name = o.class_name
                        WHERE o.key = object_fields.object_key);
                    UPDATE object_elements SET partition = (
                        SELECT p.key FROM objects o JOIN object_partitions p
                        ON p.datastore_key = o.datastore_key AND p.class_name = o.class_name
                        WHERE o.key = object_elements.object_key);
                    CREATE INDEX object_fields_by_value ON object_fields(partition, field, sort_key);
                    CREATE INDEX object_elements_by_value ON object_elements(partition, field, element_key);
                    """)
        }
        migrator.registerMigration("v15: readers' history without current readers") { db in
            // Every object kept a history row per reader, open while the reader could read it,
            // and an index of them by principal: a creation readable by four principals wrote
            // eight B-tree entries for them, a third of what it wrote. A live object's current
            // readers are its reader set since v10, so the history now keeps only what the set
            // does not tell: access that ended, a tombstone's readers, and the readers of an
            // object everyone may read besides `*` (its set is `*` alone)
            // (``SQLiteObjectWriter``'s `storeReaderHistory`). The other open rows of live
            // objects go.
            try db.execute(
                sql: """
                    DELETE FROM object_readers WHERE to_sequence IS NULL
                        AND object_key IN (SELECT key FROM objects WHERE deleted = 0)
                        AND (principal = '*' OR object_key NOT IN (
                            SELECT o.key FROM objects o JOIN reader_sets s ON s.id = o.readers
                            WHERE o.deleted = 0 AND s.principals = '["*"]'));
                    """)
        }
        migrator.registerMigration("v16: first creations' operations in short form") { _ in
            // Nothing to change: a first creation's operation is now stored in a short form
            // (``StoredOperation``), which earlier versions cannot read. Recording this version
            // makes an earlier server refuse the file at start-up (``RooftopError/newerSchema(_:)``)
            // instead of failing on those rows later. Rows stored before read as they are.
        }
        return migrator
    }
}
