import Foundation
import Logging
import PostgresNIO
import RooftopShared

/// The PostgreSQL schema, as versioned migrations of its own (the SQLite backend has
/// ``SQLiteMigrations``). It follows the storage design of docs/server.md ("What is stored, and
/// why", "Retention"): each record stored once, bounded indexes, history swept after the
/// retention. ``PostgresStorage`` reads and writes it; it differs from SQLite's in these ways,
/// which the schema is made for:
///
/// - Change sequences follow transaction IDs (each transaction numbers its changes in a range of
///   its own, ``PostgresStatements/FeedBase``, since v9), and the feed is read only below the
///   range of the oldest transaction still running, so a pull reading the feed after sequence N
///   never misses a change that commits later with a lower number. Writers of one datastore
///   wait for each other only to add its counters, from there to commit.
/// - Keys are `bigint` identities; booleans are `boolean`; stored JSON is `text`, sent as it is
///   stored (a `jsonb` column would reorder and re-encode it).
///
/// `rooftop_migrations` records what was applied. Servers sharing the database migrate one at a
/// time (a transaction-scoped advisory lock), each migration in its own transaction.
enum PostgresMigrations {
    /// One schema version: statements, and optionally work in Swift after them (for what SQL
    /// cannot compute the way the server does, such as user-name keys) and statements after it,
    /// all in one transaction.
    struct Migration: Sendable {
        /// The name recorded in `rooftop_migrations`.
        var name: String
        /// The statements, separated by `;`.
        var sql: String
        /// Work after ``sql`` on the migration's connection, in its transaction.
        var then: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil
        /// Statements after ``then``.
        var finally: String = ""

        init(
            _ name: String, _ sql: String, then: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil,
            finally: String = ""
        ) {
            self.name = name
            self.sql = sql
            self.then = then
            self.finally = finally
        }
    }

    /// The migrations, oldest first. Append only: a migration that has shipped never changes.
    static let all: [Migration] = [
        Migration(
            "v1: accounts, datastores, objects, change feed, bounded history",
            """
            CREATE TABLE settings (
                name text PRIMARY KEY,
                value bytea NOT NULL
            );
            CREATE TABLE users (
                id text PRIMARY KEY,
                username text NOT NULL UNIQUE,
                email text,
                password_hash text NOT NULL,
                created_at bigint NOT NULL
            );
            CREATE TABLE sessions (
                token_hash text PRIMARY KEY,
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at bigint NOT NULL,
                expires_at bigint NOT NULL
            );
            CREATE INDEX sessions_by_expiry ON sessions(expires_at);
            CREATE TABLE roles (
                name text PRIMARY KEY,
                acl text NOT NULL,
                created_at bigint NOT NULL
            );
            CREATE TABLE role_users (
                role text NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
                user_id text NOT NULL,
                PRIMARY KEY (role, user_id)
            );
            CREATE TABLE role_children (
                role text NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
                child text NOT NULL,
                PRIMARY KEY (role, child)
            );
            CREATE TABLE datastores (
                key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                id text NOT NULL,
                scope text NOT NULL,
                owner_id text,
                title text,
                created_at bigint NOT NULL,
                sequence bigint NOT NULL DEFAULT 0,
                record_count bigint NOT NULL DEFAULT 0,
                size_bytes bigint NOT NULL,
                history_from bigint NOT NULL DEFAULT 0,
                mark_sequence bigint NOT NULL DEFAULT 0,
                mark_at bigint,
                UNIQUE (scope, id)
            );
            CREATE TABLE datastore_roles (
                datastore_key bigint NOT NULL REFERENCES datastores(key) ON DELETE CASCADE,
                principal text NOT NULL,
                role text NOT NULL,
                PRIMARY KEY (datastore_key, principal)
            );
            CREATE INDEX datastore_roles_by_principal ON datastore_roles(principal);
            CREATE TABLE class_settings (
                class_name text PRIMARY KEY,
                settings text NOT NULL
            );
            CREATE TABLE objects (
                key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                datastore_key bigint NOT NULL REFERENCES datastores(key) ON DELETE CASCADE,
                class_name text NOT NULL,
                object_id text NOT NULL,
                body text NOT NULL,
                created_at bigint,
                updated_at bigint,
                version bigint NOT NULL,
                sequence bigint NOT NULL,
                deleted boolean NOT NULL DEFAULT false,
                size_bytes bigint NOT NULL,
                UNIQUE (datastore_key, class_name, object_id)
            );
            CREATE INDEX objects_by_sequence ON objects(datastore_key, sequence);
            CREATE INDEX objects_tombstones ON objects(datastore_key, sequence) WHERE deleted;
            CREATE TABLE object_fields (
                object_key bigint NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                field text NOT NULL,
                kind integer NOT NULL,
                sort_key bytea,
                latitude double precision,
                longitude double precision,
                PRIMARY KEY (object_key, field)
            );
            CREATE INDEX object_fields_by_value ON object_fields(field, sort_key);
            CREATE TABLE object_elements (
                object_key bigint NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                field text NOT NULL,
                element_key bytea NOT NULL,
                PRIMARY KEY (object_key, field, element_key)
            );
            CREATE INDEX object_elements_by_value ON object_elements(field, element_key);
            CREATE TABLE unindexed_fields (
                datastore_key bigint NOT NULL REFERENCES datastores(key) ON DELETE CASCADE,
                class_name text NOT NULL,
                field text NOT NULL,
                objects bigint NOT NULL,
                PRIMARY KEY (datastore_key, class_name, field)
            );
            CREATE TABLE object_readers (
                object_key bigint NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                principal text NOT NULL,
                from_sequence bigint NOT NULL,
                to_sequence bigint,
                PRIMARY KEY (object_key, principal, from_sequence)
            );
            CREATE INDEX object_readers_by_principal ON object_readers(principal, object_key);
            CREATE TABLE object_operations (
                object_key bigint NOT NULL REFERENCES objects(key) ON DELETE CASCADE,
                version bigint NOT NULL,
                operation text NOT NULL,
                sequence bigint,
                PRIMARY KEY (object_key, version)
            );
            CREATE TABLE mutation_results (
                scope text NOT NULL,
                mutation_id text NOT NULL,
                version bigint,
                object_key bigint,
                detail text,
                created_at bigint NOT NULL,
                PRIMARY KEY (scope, mutation_id)
            );
            """
        ),
        Migration(
            // Administration lists and ends a user's sessions (docs/server.md, "Administer a server").
            "v2: sessions by user",
            "CREATE INDEX sessions_by_user ON sessions(user_id, created_at)"
        ),
        Migration(
            // A deleted role's name is kept, so that no later role of that name inherits the grants
            // naming it (docs/server.md, "Roles"). Names deleted before this migration are not
            // known; those still named by datastore sharing or object readers are reserved now.
            "v3: deleted role names stay reserved",
            """
            CREATE TABLE retired_roles (
                name text PRIMARY KEY,
                retired_at bigint NOT NULL
            );
            INSERT INTO retired_roles (name, retired_at)
                SELECT DISTINCT substr(principal, 6), (extract(epoch FROM now()) * 1000)::bigint
                FROM (SELECT principal FROM datastore_roles UNION SELECT principal FROM object_readers) AS granted
                WHERE substr(principal, 1, 5) = 'role:' AND substr(principal, 6) NOT IN (SELECT name FROM roles)
            """
        ),
        Migration(
            // The dashboard's sessions, by the SHA-256 of their tokens (as users' sessions): the
            // HMAC key that signed them before is no longer kept.
            "v4: dashboard sessions stored as hashes",
            """
            CREATE TABLE dashboard_sessions (token_hash text PRIMARY KEY, expires_at bigint NOT NULL);
            DELETE FROM settings WHERE name = 'dashboard-hmac-key'
            """
        ),
        Migration(
            // User names are compared by a key (SignUpRequest.usernameKey: compatibility-decomposed,
            // case-folded, invisible characters dropped), unique, so that look-alike accounts
            // cannot be made. Keys are computed in Swift, as the server computes them
            // (PostgreSQL's normalize() and lower() differ). Existing users whose keys collide all
            // stay: the oldest gets the key, the others the key, U+001F and their ID, and log in
            // by their exact name (UserNameMigration); names are rewritten in NFC where no other
            // user has that form.
            "v5: user names compared by key",
            "ALTER TABLE users ADD COLUMN name_key text",
            then: { connection, logger in try await fillNameKeys(connection, logger: logger) },
            finally: """
                ALTER TABLE users ALTER COLUMN name_key SET NOT NULL;
                ALTER TABLE users ADD CONSTRAINT users_name_key_key UNIQUE (name_key)
                """
        ),
        Migration(
            // Each distinct set of readers is stored once, a live object's row names its set (`*`
            // alone when everyone may read it), and a query tests the row's set against its
            // caller's instead of looking up each candidate's readers (SQLiteMigrations v10). Not
            // unique: two transactions that make the same set at once each make their own (with
            // the same members) rather than one waiting for the other's commit. The
            // sets of the objects stored are made from their current readers, with the text the
            // writer gives them (SQLIndexRows.readerSetText: a JSON array in byte order).
            "v6: reader sets",
            """
            CREATE TABLE reader_sets (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                principals text NOT NULL
            );
            CREATE INDEX reader_sets_by_principals ON reader_sets(principals);
            CREATE TABLE reader_set_members (
                principal text NOT NULL,
                reader_set bigint NOT NULL REFERENCES reader_sets(id),
                PRIMARY KEY (principal, reader_set)
            );
            ALTER TABLE objects ADD COLUMN readers bigint;
            CREATE TEMPORARY TABLE v6_object_sets ON COMMIT DROP AS
                SELECT r.object_key,
                CASE WHEN bool_or(r.principal = '*') THEN '["*"]'
                ELSE '[' || string_agg(to_json(r.principal)::text, ',' ORDER BY r.principal COLLATE "C") || ']' END
                    AS principals
                FROM object_readers r JOIN objects o ON o.key = r.object_key
                WHERE r.to_sequence IS NULL AND NOT o.deleted
                GROUP BY r.object_key;
            INSERT INTO reader_sets (principals) SELECT DISTINCT principals FROM v6_object_sets;
            INSERT INTO reader_set_members (principal, reader_set)
                SELECT DISTINCT r.principal, s.id FROM v6_object_sets os
                JOIN reader_sets s ON s.principals = os.principals
                JOIN object_readers r ON r.object_key = os.object_key AND r.to_sequence IS NULL
                WHERE os.principals <> '["*"]';
            INSERT INTO reader_set_members (principal, reader_set)
                SELECT '*', id FROM reader_sets WHERE principals = '["*"]';
            UPDATE objects o SET readers = s.id FROM v6_object_sets os JOIN reader_sets s ON s.principals = os.principals
                WHERE os.object_key = o.key;
            CREATE INDEX objects_by_readers ON objects(datastore_key, class_name, readers) WHERE NOT deleted
            """
        ),
        Migration(
            // Reader sets no object names are swept in two steps (PostgresStorage.sweepReaderSets):
            // marked with the time a sweep found them unnamed, deleted by a sweep long after.
            "v7: reader sets swept",
            "ALTER TABLE reader_sets ADD COLUMN unnamed_since bigint"
        ),
        Migration(
            // An object's index, element, reader and operation rows name it without a foreign key:
            // each row written checked its object with a trigger (about 20 per object a push
            // creates, half the time of the statement that writes them). The two places that
            // delete objects, the history sweep's tombstones and a datastore's deletion, delete
            // their rows with them (``PostgresStatements/objectRowTables``). The tables are locked
            // first, in one order, so that a push in flight cannot deadlock with the drops; a
            // constraint left (named otherwise) fails the migration.
            "v8: an object's rows without foreign keys",
            """
            LOCK TABLE objects, object_fields, object_elements, object_readers, object_operations IN ACCESS EXCLUSIVE MODE;
            ALTER TABLE object_fields DROP CONSTRAINT IF EXISTS object_fields_object_key_fkey;
            ALTER TABLE object_elements DROP CONSTRAINT IF EXISTS object_elements_object_key_fkey;
            ALTER TABLE object_readers DROP CONSTRAINT IF EXISTS object_readers_object_key_fkey;
            ALTER TABLE object_operations DROP CONSTRAINT IF EXISTS object_operations_object_key_fkey
            """,
            then: { connection, logger in
                let rows = try await connection.query(
                    "SELECT count(*)::bigint FROM pg_constraint WHERE contype = 'f' AND confrelid = 'objects'::regclass",
                    logger: logger)
                for try await left in rows.decode(Int64.self) where left != 0 {
                    throw RooftopError(.internal, "migration v8: \(left) foreign keys still name objects")
                }
            }
        ),
        Migration(
            // Changes are numbered by their transaction's ID (``PostgresStatements/FeedBase``), not
            // by a counter in the datastore's row that every writer took in turn until commit.
            // The origin puts every number from now on just above every number given before: the
            // largest sequence so far, less the part this transaction's ID adds (it may be
            // negative); 1048576 is ``PostgresStatements/changesPerTransaction``, written out as a
            // migration's SQL never changes. Processes of an earlier version must be stopped
            // first: they number from the row.
            "v9: changes numbered by transaction",
            """
            CREATE TABLE feed_origin (origin bigint NOT NULL);
            INSERT INTO feed_origin (origin)
                SELECT coalesce(max(sequence), 0) + 1 - pg_current_xact_id()::text::bigint * 1048576 FROM datastores
            """
        ),
        Migration(
            // A live object's current readers are its reader set (v6), so the readers' history
            // keeps only what the set does not tell: access that ended, a tombstone's readers, and
            // the readers of an object everyone may read besides `*` (its set is `*` alone)
            // (``ReaderHistoryWrite``, as SQLite's v15). Creations wrote a row per reader, three
            // of them with their index entries for an object four users may read. The other rows
            // without an end of live objects go. Processes of an earlier version must be stopped
            // first: they would end access by updating rows that are no longer there.
            "v10: readers' history without current readers",
            """
            DELETE FROM object_readers r USING objects o
                WHERE o.key = r.object_key AND NOT o.deleted AND r.to_sequence IS NULL
                AND (r.principal = '*' OR NOT EXISTS (
                    SELECT 1 FROM reader_sets s WHERE s.id = o.readers AND s.principals = '["*"]'))
            """
        ),
        Migration(
            // Queries read `objectId` from the objects' own column, which their unique index finds
            // (``SQLIndexLayout/server``, as SQLite's v12): its rows, one per object, each with an
            // entry at a random place of `object_fields_by_value`, are written no more. The column
            // compares bytewise, as keys do (`COLLATE "C"`, what the compiler's ranges, prefixes
            // and orders say), so that its unique index serves them: an index serves only
            // comparisons in its own collation. Processes of an earlier version must be stopped
            // first: they would look objects up by rows that are no longer written.
            "v11: objectId read from its column",
            """
            DELETE FROM object_fields WHERE field = 'objectId';
            DELETE FROM unindexed_fields WHERE field = 'objectId';
            ALTER TABLE objects ALTER COLUMN object_id TYPE text COLLATE "C"
            """
        ),
        Migration(
            // A class that declares indexes keeps index rows only of the fields they name (and of
            // `createdAt` and `updatedAt` only when named; otherwise queries read their columns),
            // as SQLite's storage does (its v11 and v12, ``RowFields``): `class_rows` says what a
            // class's objects keep. The classes that declare indexes now keep their rows of
            // every field until the background rebuild removes the others (they read only the
            // declared ones at once). Processes of an earlier version must be stopped first:
            // they would write rows of every field, and their queries would read rows of
            // undeclared fields that are gone.
            "v12: rows of declared fields only",
            """
            CREATE TABLE class_rows (
                class_name text PRIMARY KEY,
                written text,
                complete text,
                rebuilt_to bigint
            )
            """,
            then: { connection, logger in try await declareRowFields(connection, logger: logger) }
        ),
        Migration(
            // Nothing to change: a first creation's operation is now stored in a short form
            // (``StoredOperation``), which earlier versions cannot read. Recording this version
            // makes an earlier server refuse the database at start-up (``RooftopError/newerSchema(_:)``)
            // instead of failing on those rows later; processes of an earlier version must be
            // stopped first. Rows stored before read as they are.
            "v13: first creations' operations in short form", ""
        ),
    ]

    /// Gives every class that declares indexes its row-keeping state (migration v12): the declared
    /// fields complete, a rebuild due from the first object (``RowFields/declaring(_:)``).
    static func declareRowFields(_ connection: PostgresConnection, logger: Logger) async throws {
        var states: [(String, RowFields)] = []
        let rows = try await connection.query("SELECT settings FROM class_settings ORDER BY class_name", logger: logger)
        for try await text in rows.decode(String.self) {
            let settings = try DocumentCoding.decode(ClassSettings.self, from: text)
            if let state = RowFields.every.declaring(RowFields.declared(by: settings.indexes)) {
                states.append((settings.className, state))
            }
        }
        for (className, state) in states {
            let (written, complete) = (state.written.map(RowFields.text), state.complete.map(RowFields.text))
            try await connection.query(
                """
                INSERT INTO class_rows (class_name, written, complete, rebuilt_to)
                VALUES (\(className), \(written), \(complete), \(state.rebuiltTo))
                """, logger: logger)
            // The counts of values too long to index are the rows' own (as a declaration does).
            let kept = (state.complete ?? []).sorted()
            try await connection.query(
                "DELETE FROM unindexed_fields WHERE class_name = \(className) AND field <> ALL(\(kept)::text[])",
                logger: logger)
        }
    }

    /// Gives every user its name key (migration v5), the users read oldest first, written back
    /// 1,000 at a time.
    static func fillNameKeys(_ connection: PostgresConnection, logger: Logger) async throws {
        var users: [UserNameMigration.User] = []
        let rows = try await connection.query("SELECT id, username FROM users ORDER BY created_at, id", logger: logger)
        for try await (id, username) in rows.decode((String, String).self) {
            users.append(UserNameMigration.User(id: id, username: username))
        }
        let keyed = UserNameMigration.keys(for: users)
        var start = 0
        while start < keyed.count {
            let batch = keyed[start..<min(start + 1_000, keyed.count)]
            let ids = batch.map(\.id)
            let names = batch.map(\.username)
            let keys = batch.map(\.key)
            try await connection.query(
                """
                UPDATE users SET username = keyed.username, name_key = keyed.key
                FROM unnest(\(ids)::text[], \(names)::text[], \(keys)::text[]) AS keyed(id, username, key)
                WHERE users.id = keyed.id
                """, logger: logger)
            start += batch.count
        }
    }

    /// A migration's statements, one by one (the extended protocol runs one per query). The
    /// migrations' SQL holds no `;` but between statements.
    static func statements(of sql: String) -> [String] {
        sql.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    /// The advisory lock key migrations hold (any constant, the same in every server).
    static let lockKey: Int64 = 0x526F_6F66_746F_70  // "Rooftop"

    /// The advisory lock of one deployment: ``lockKey`` for the default schema, mixed with an
    /// FNV-1a hash of the schema's name otherwise, so that deployments in different schemas of one
    /// database migrate without waiting for each other (the same in every server process).
    static func lockKey(schema: String?) -> Int64 {
        guard let schema else { return lockKey }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in schema.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return lockKey ^ Int64(bitPattern: hash)
    }

    /// Applies the migrations not applied yet, one transaction each; returns the names applied.
    /// - Throws: `badState` when the database records a migration this version does not have (a
    ///   newer server's, ``RooftopError/newerSchema(_:)``), before any is applied; what the
    ///   database answers when a migration fails (that migration is rolled back; the ones before
    ///   it stay applied).
    @discardableResult
    static func migrate(_ client: PostgresClient, schema: String? = nil, logger: Logger) async throws -> [String] {
        let lock = lockKey(schema: schema)
        // Under the lock too: concurrent `CREATE TABLE IF NOT EXISTS` can collide in PostgreSQL.
        let unknown = try await client.withTransaction(logger: logger) { connection -> [String] in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lock))", logger: logger)
            if let schema {
                // Validated by the URL's parser: ASCII letters, digits and `_`.
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            }
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS rooftop_migrations (
                    name text PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, logger: logger)
            let known = Set(all.map(\.name))
            var unknown: [String] = []
            for try await name in try await connection.query("SELECT name FROM rooftop_migrations", logger: logger)
                .decode(String.self) where !known.contains(name)
            {
                unknown.append(name)
            }
            return unknown
        }
        // Thrown as itself, not wrapped in the transaction's error.
        guard unknown.isEmpty else { throw RooftopError.newerSchema(unknown) }
        var applied: [String] = []
        for migration in all {
            let name = migration.name
            let ran = try await client.withTransaction(logger: logger) { connection -> Bool in
                // Another server migrating at the same time waits here, then finds it applied.
                try await connection.query("SELECT pg_advisory_xact_lock(\(lock))", logger: logger)
                let rows = try await connection.query(
                    "SELECT 1 FROM rooftop_migrations WHERE name = \(name)", logger: logger)
                for try await _ in rows { return false }
                for statement in statements(of: migration.sql) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await migration.then?(connection, logger)
                for statement in statements(of: migration.finally) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO rooftop_migrations (name) VALUES (\(name))", logger: logger)
                return true
            }
            if ran {
                logger.info("applied a PostgreSQL migration", metadata: ["migration": "\(name)"])
                applied.append(name)
            }
        }
        return applied
    }
}
