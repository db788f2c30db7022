import Logging
import PostgresNIO
import RooftopSQL
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// The PostgreSQL schema is migrated the way SQLite's is: versioned, recorded, once per database
/// even when several servers start together.
@Suite("PostgreSQL: migrations")
struct PostgresMigrationTests {
    private let logger = Logger(label: "postgres-migration-tests")

    /// The tables of the storage design (docs/server.md, "What is stored, and why").
    private static let tables: Set<String> = [
        "settings", "users", "sessions", "roles", "role_users", "role_children", "datastores", "datastore_roles",
        "class_settings", "objects", "object_fields", "object_elements", "unindexed_fields", "object_readers",
        "object_operations", "mutation_results", "retired_roles", "dashboard_sessions", "rooftop_migrations",
        "reader_sets", "reader_set_members", "feed_origin", "class_rows",
    ]

    private func tableNames(in database: PostgresPool) async throws -> Set<String> {
        var names: Set<String> = []
        let rows = try await database.client.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
        for try await name in rows.decode(String.self) { names.insert(name) }
        return names
    }

    @Test("a new database gets every table, recorded once; migrating again changes nothing",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func freshDatabase() async throws {
        let logger = self.logger
        try await PostgresTestCluster.withPools(connections: 4, logger: logger) { pools in
            let database = pools[0]
            let applied = try await PostgresMigrations.migrate(database.client, logger: logger)
            #expect(applied == PostgresMigrations.all.map(\.name))
            #expect(try await tableNames(in: database) == Self.tables)
            #expect(try await PostgresMigrations.migrate(database.client, logger: logger).isEmpty)
            var recorded: [String] = []
            for try await name in try await database.client.query("SELECT name FROM rooftop_migrations").decode(
                String.self)
            {
                recorded.append(name)
            }
            #expect(recorded == PostgresMigrations.all.map(\.name))
            // No foreign key names an object (v8): each would check every row written.
            let references = try await database.client.query(
                "SELECT count(*)::bigint FROM pg_constraint WHERE contype = 'f' AND confrelid = 'objects'::regclass")
            for try await count in references.decode(Int64.self) { #expect(count == 0) }
        }
    }

    @Test("servers starting together on one database apply each migration once",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func concurrentServers() async throws {
        let logger = self.logger
        try await PostgresTestCluster.withPools(4, logger: logger) { servers in
            let applied = try await withThrowingTaskGroup(of: [String].self) { group in
                for server in servers {
                    group.addTask { try await PostgresMigrations.migrate(server.client, logger: logger) }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            // Each once, whichever server applied it (the servers finish in any order).
            #expect(applied.sorted() == PostgresMigrations.all.map(\.name).sorted())
            #expect(try await tableNames(in: servers[0]) == Self.tables)
        }
    }

    @Test("a v2 database migrates to reserved role names: roles deleted before, still named by sharing or readers, stay taken",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func fromV2() async throws {
        let logger = self.logger
        try await PostgresTestCluster.withPools(connections: 2, logger: logger) { pools in
            let client = pools[0].client
            // What a v2 server left: role Kept exists; Shared and Readers were deleted, but a
            // datastore's sharing and an object's readers still name them.
            try await PostgresMigrations.migrate(client, logger: logger)  // creates rooftop_migrations
            let v3 = "v3: deleted role names stay reserved"
            try await client.query("DROP TABLE retired_roles", logger: logger)
            try await client.query("DELETE FROM rooftop_migrations WHERE name = \(v3)", logger: logger)
            for statement in [
                "INSERT INTO roles (name, acl, created_at) VALUES ('Kept', '{}', 0)",
                "INSERT INTO datastores (id, scope, owner_id, created_at, size_bytes) VALUES ('.team', '', 'u1', 0, 0)",
                """
                INSERT INTO datastore_roles (datastore_key, principal, role) SELECT key, p, 'viewer'
                FROM datastores, unnest(ARRAY['role:Shared', 'role:Kept', 'u2']) AS p
                """,
                """
                INSERT INTO objects (datastore_key, class_name, object_id, body, version, sequence, size_bytes)
                SELECT key, 'T', 'a', '{}', 1, 1, 100 FROM datastores
                """,
                """
                INSERT INTO object_readers (object_key, principal, from_sequence)
                SELECT key, p, 1 FROM objects, unnest(ARRAY['role:Readers', 'role:Kept', '*']) AS p
                """,
            ] {
                try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            #expect(try await PostgresMigrations.migrate(client, logger: logger) == [v3])
            var retired: [String] = []
            for try await name in try await client.query("SELECT name FROM retired_roles ORDER BY name", logger: logger)
                .decode(String.self)
            {
                retired.append(name)
            }
            #expect(retired == ["Readers", "Shared"])
        }
    }

    @Test("a v4 database migrates to user-name keys: look-alike users made before all stay and log in; new look-alikes are refused",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func fromV4() async throws {
        let logger = self.logger
        try await TestPostgres.withDatabase { url in
            let storage = try PostgresStorage(url: url, maximumConnections: 4, logger: logger)
            do {
                // What a v4 server left: the schema without name keys, and names that differ only
                // in case or Unicode form.
                try await storage.prepare()
                let client = storage.pool.client
                let v5 = "v5: user names compared by key"
                try await client.query("ALTER TABLE users DROP COLUMN name_key", logger: logger)
                try await client.query("DELETE FROM rooftop_migrations WHERE name = \(v5)", logger: logger)
                for user in LegacyUserNames.users {
                    try await client.query(
                        """
                        INSERT INTO users (id, username, password_hash, created_at)
                        VALUES (\(user.id), \(user.username), 'unusable', \(user.createdAt))
                        """, logger: logger)
                }
                #expect(try await PostgresMigrations.migrate(client, logger: logger) == [v5])
                var keys: [String: String] = [:]
                for try await (id, key) in try await client.query("SELECT id, name_key FROM users", logger: logger)
                    .decode((String, String).self)
                {
                    keys[id] = key
                }
                try await LegacyUserNames.check(storage, keys: keys)
                try await storage.close()
            } catch {
                try? await storage.close()
                throw error
            }
        }
    }

    @Test("a v5 database migrates to reader sets: each caller finds what it did; the sets made match the writer's",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func fromV5() async throws {
        let logger = self.logger
        try await TestPostgres.withDatabase { url in
            let storage = try PostgresStorage(url: url, maximumConnections: 4, logger: logger)
            do {
                try await storage.prepare()
                let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
                try await StorageConformance.ReaderSetCase.write(storage, datastoreKey: key)
                // What a v5 server left: the same objects and readers' history (with a row per
                // current reader, ``currentReaderRows``), without sets.
                let client = storage.pool.client
                let v6 = "v6: reader sets"
                for statement in [
                    Self.currentReaderRows,
                    "DROP INDEX objects_by_readers", "ALTER TABLE objects DROP COLUMN readers",
                    "DROP TABLE reader_set_members", "DROP TABLE reader_sets",
                ] {
                    try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await client.query("DELETE FROM rooftop_migrations WHERE name = \(v6)", logger: logger)
                let v7 = "v7: reader sets swept"
                try await client.query("DELETE FROM rooftop_migrations WHERE name = \(v7)", logger: logger)
                let v10 = "v10: readers' history without current readers"
                try await client.query("DELETE FROM rooftop_migrations WHERE name = \(v10)", logger: logger)
                #expect(try await PostgresMigrations.migrate(client, logger: logger) == [v6, v7, v10])
                try await storage.close()
            } catch {
                try? await storage.close()
                throw error
            }
            // A server started on the migrated database (nothing kept from before).
            let restarted = try PostgresStorage(url: url, maximumConnections: 4, logger: logger)
            do {
                let storage = restarted
                try await storage.prepare()
                let client = storage.pool.client
                let datastore = try await storage.datastore(id: DatastoreID.app, ownerId: nil)
                let key = try #require(datastore).key
                try await StorageConformance.ReaderSetCase.check(storage, datastoreKey: key)
                var sets: [String: Int64] = [:]
                for try await (principals, members) in try await client.query(
                    """
                    SELECT s.principals, count(m.principal) FROM reader_sets s
                    JOIN reader_set_members m ON m.reader_set = s.id GROUP BY s.id
                    """, logger: logger
                ).decode((String, Int64).self) {
                    sets[principals] = members
                }
                #expect(sets == StorageConformance.ReaderSetCase.migratedSets)
                // The writer names the sets the migration made: writing their ACLs makes none.
                try await StorageConformance.ReaderSetCase.writeAfterMigration(storage, datastoreKey: key)
                var count: Int64 = 0
                for try await value in try await client.query("SELECT count(*) FROM reader_sets", logger: logger)
                    .decode(Int64.self)
                {
                    count = value
                }
                #expect(count == 6)
                try await storage.close()
            } catch {
                try? await restarted.close()
                throw error
            }
        }
    }

    @Test("a v8 database migrates to changes numbered by transaction: a pull from a checkpoint taken before gets every later change, numbered above it",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func fromV8() async throws {
        let logger = self.logger
        try await TestPostgres.withDatabase { url in
            try await Self.withStorage(url: url, logger: logger) { storage in
                try await storage.prepare()
                let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
                // What a v8 server left: a change numbered by the datastore's row, far above
                // where the transaction IDs would number them.
                let client = storage.pool.client
                let old: Int64 = 1_000_000_000_000_000
                let v9 = "v9: changes numbered by transaction"
                for statement in [
                    "DROP TABLE feed_origin",
                    "UPDATE datastores SET sequence = \(old), record_count = 1",
                    """
                    INSERT INTO objects (datastore_key, class_name, object_id, body, version, sequence, size_bytes)
                    SELECT key, 'T', 'before', '{"className":"T","objectId":"before","fields":{},"version":1}', 1, \(old), 100
                    FROM datastores
                    """,
                    "INSERT INTO object_readers (object_key, principal, from_sequence) SELECT key, '*', \(old) FROM objects",
                ] {
                    try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await client.query("DELETE FROM rooftop_migrations WHERE name = \(v9)", logger: logger)
                #expect(try await PostgresMigrations.migrate(client, logger: logger) == [v9])

                let before = try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil)
                #expect(before.map(\.objectId) == ["before"] && before.map(\.sequence) == [old])
                #expect(try await storage.datastore(key: key)?.sequence == old)
                let after = try await StorageWrites.put(StorageConformance.object("after"), datastoreKey: key, into: storage)
                #expect(after.sequence > old)
                let pulled = try await storage.changes(datastoreKey: key, after: old, limit: 100, classes: nil)
                #expect(pulled.map(\.objectId) == ["after"] && pulled.map(\.sequence) == [after.sequence])
                #expect(try await storage.datastore(key: key)?.sequence == after.sequence)
            }
        }
    }

    /// What servers before v10 kept in the readers' history besides what a reader set does not
    /// tell: a row without an end for each current reader of each live object.
    static let currentReaderRows = """
        INSERT INTO object_readers (object_key, principal, from_sequence)
        SELECT o.key, p.value, o.sequence FROM objects o JOIN reader_sets s ON s.id = o.readers,
        jsonb_array_elements_text(s.principals::jsonb) AS p(value) WHERE NOT o.deleted AND NOT EXISTS (
            SELECT 1 FROM object_readers r WHERE r.object_key = o.key AND r.principal = p.value AND r.to_sequence IS NULL)
        """

    @Test("a v9 database migrates to a readers' history without current readers: every read of readers answers the same",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func fromV9() async throws {
        let logger = self.logger
        try await Self.withPreparedStorage(logger: logger) { storage, count in
            let client = storage.pool.client
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            let checkpoint = try await ReaderHistoryCase.write(storage, datastoreKey: key) {
                // A creation writes no history: its readers are its reader set.
                let rows = try await count("SELECT count(*) FROM object_readers")
                #expect(rows == 1, "only u1 of publicOwned, whose set is `*` alone")
            }
            let expected = try await ReaderHistoryCase.answers(storage, datastoreKey: key, checkpoint: checkpoint)
            ReaderHistoryCase.checkExpected(expected)

            // What a v9 server kept besides: a history row, open, for each current reader of
            // each live object.
            let v10 = "v10: readers' history without current readers"
            try await client.query(PostgresQuery(unsafeSQL: Self.currentReaderRows), logger: logger)
            #expect(try await count("SELECT count(*) FROM object_readers WHERE to_sequence IS NULL") > 5)
            try await client.query("DELETE FROM rooftop_migrations WHERE name = \(v10)", logger: logger)
            #expect(try await PostgresMigrations.migrate(client, logger: logger) == [v10])

            let open = try await count(
                """
                SELECT count(*) FROM object_readers r JOIN objects o ON o.key = r.object_key
                LEFT JOIN reader_sets s ON s.id = o.readers
                WHERE NOT o.deleted AND r.to_sequence IS NULL AND (r.principal = '*' OR s.principals IS DISTINCT FROM '["*"]')
                """)
            #expect(open == 0, "live objects' current readers are their sets, and those a set does not name")
            let tombstoneRows = try await count(
                """
                SELECT count(*) FROM object_readers r JOIN objects o ON o.key = r.object_key
                WHERE o.object_id = 'deleted' AND r.to_sequence IS NULL AND r.principal IN ('u2', 'u3')
                """)
            #expect(tombstoneRows == 2, "a tombstone keeps its readers")
            let migrated = try await ReaderHistoryCase.answers(storage, datastoreKey: key, checkpoint: checkpoint)
            #expect(migrated == expected)
        }
    }

    @Test("a database a newer server migrated is refused: nothing applied, a clear error",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func newerSchemaRefused() async throws {
        let logger = self.logger
        try await PostgresTestCluster.withPools(connections: 1, logger: logger) { pools in
            let client = pools[0].client
            try await PostgresMigrations.migrate(client, logger: logger)
            let future = "v99: a migration from a newer server"
            let last = PostgresMigrations.all[PostgresMigrations.all.count - 1].name
            try await client.query("INSERT INTO rooftop_migrations (name) VALUES (\(future))", logger: logger)
            try await client.query("DELETE FROM rooftop_migrations WHERE name = \(last)", logger: logger)
            do {
                try await PostgresMigrations.migrate(client, logger: logger)
                Issue.record("a newer server's database was migrated")
            } catch let error as RooftopError {
                #expect(error.code == .badState)
                #expect(error.message.contains(future) && error.message.contains("newer"), "\(error.message)")
            }
            var recorded: Set<String> = []
            for try await name in try await client.query("SELECT name FROM rooftop_migrations", logger: logger)
                .decode(String.self)
            {
                recorded.insert(name)
            }
            #expect(recorded.contains(future) && !recorded.contains(last), "nothing was applied")
        }
    }

    @Test("objectId is read from its column (v11): no rows written, a v10 database's rows removed, every kind of test answered",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func fromV10() async throws {
        let logger = self.logger
        try await Self.withPreparedStorage(logger: logger) { storage, count in
            let client = storage.pool.client
            let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
            let ids = ["a0", "a1", "a~", "b0", "b1", "c", "Z9"]
            for id in ids {
                _ = try await StorageWrites.put(
                    StorageConformance.object(id, in: .app, fields: ["n": .int(1)]), datastoreKey: key, into: storage)
            }
            #expect(try await count("SELECT count(*) FROM object_fields WHERE field = 'objectId'") == 0)
            #expect(try await count("SELECT count(*) FROM object_fields WHERE field = 'createdAt'") == Int64(ids.count))

            // What a v10 server kept besides: a row of each object's ID, with its key
            // (``Value/sortKey``: the kind byte, the text, `00 00`).
            let kind = Int64(Value.Kind.string.rawValue)
            try await client.query(
                """
                INSERT INTO object_fields (object_key, field, kind, sort_key)
                SELECT key, 'objectId', \(kind), \(ByteBuffer(bytes: [UInt8(kind + 1)])) || convert_to(object_id, 'UTF8')
                    || \(ByteBuffer(bytes: [0, 0])) FROM objects
                """, logger: logger)
            #expect(try await count("SELECT count(*) FROM object_fields WHERE field = 'objectId'") == Int64(ids.count))
            let v11 = "v11: objectId read from its column"
            try await client.query("DELETE FROM rooftop_migrations WHERE name = \(v11)", logger: logger)
            #expect(try await PostgresMigrations.migrate(client, logger: logger) == [v11])
            #expect(try await count("SELECT count(*) FROM object_fields WHERE field = 'objectId'") == 0)

            // Every kind of test of the column, against the evaluator's answers over the same
            // objects; `a¿`'s successor (`a` C2 C0) is not UTF-8, so its bound is a key.
            let snapshots = ids.map { StorageConformance.object($0, in: .app, fields: ["n": .int(1)]) }
            let predicates: [QueryPredicate] = [
                .comparison(field: "objectId", op: .equal, value: .string("b0")),
                .comparison(field: "objectId", op: .notEqual, value: .string("b0")),
                .comparison(field: "objectId", op: .greater, value: .string("a1")),
                .comparison(field: "objectId", op: .lessOrEqual, value: .string("a~")),
                .comparison(field: "objectId", op: .less, value: .int(3)),
                .comparison(field: "objectId", op: .greater, value: .int(3)),
                .in(field: "objectId", values: [.string("c"), .string("Z9"), .string("zz"), .int(1)]),
                .notIn(field: "objectId", values: [.string("c")]),
                .startsWith(field: "objectId", prefix: "a"),
                .startsWith(field: "objectId", prefix: "a¿"),
                .startsWith(field: "objectId", prefix: "b"),
                .exists(field: "objectId"),
            ]
            for predicate in predicates {
                for descending in [false, true] {
                    let query = Query(
                        className: "T", predicate: predicate, order: [QueryOrder("objectId", descending: descending)],
                        limit: 3)
                    let expected = QueryEvaluator.run(query, over: snapshots, lookup: { _ in nil }, canRead: { _ in true })
                    let page = try await storage.findStored(query, datastoreKey: key, readers: nil, limit: 3)
                    #expect(page.objects.map(\.objectId) == expected.objects.map(\.objectId), "\(predicate) \(descending)")
                    #expect(page.totalCount == expected.totalCount, "\(predicate)")
                    #expect(try await storage.count(query, datastoreKey: key, readers: nil) == expected.totalCount)
                }
            }

            // Ranges and prefixes compare the column bytewise, in its own collation since v11:
            // its unique index serves them (a class of 3,000 more objects, a range of 10 of
            // them; in another collation the index could not, and each object would be tested).
            try await client.query(
                """
                INSERT INTO objects (datastore_key, class_name, object_id, body, version, sequence, size_bytes, readers)
                SELECT \(key), 'T', 'x' || lpad(g::text, 4, '0'), '{"fields":{}}', 1, 0, 0, o.readers
                FROM generate_series(0, 2999) AS g, (SELECT readers FROM objects LIMIT 1) AS o
                """, logger: logger)
            try await client.query("ANALYZE objects", logger: logger)
            let compiler = SQLQueryCompiler(dialect: .postgres, layout: .server)
            for predicate: QueryPredicate in [
                .comparison(field: "objectId", op: .greaterOrEqual, value: .string("x2990")),
                .startsWith(field: "objectId", prefix: "x299"),
            ] {
                let select = compiler.select(
                    Query(className: "T", predicate: predicate, order: [QueryOrder("objectId")], limit: 3),
                    scope: .datastore(key), readers: nil, limit: 3)
                let plan = try await storage.readSnapshot { session in
                    try session.query(SQLFragment("EXPLAIN " + select.sql, select.arguments))
                        .map { try $0.decode(String.self) }.joined(separator: "\n")
                }
                let conditions = plan.split(separator: "\n").filter { $0.contains("Index Cond") }
                #expect(conditions.contains { $0.contains("object_id") }, "\(predicate): \(plan)")
            }
        }
    }

    @Test("PostgreSQL's key of a built-in column is the value's key (Value.sortKey), for texts and dates",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func builtInKeys() async throws {
        let logger = self.logger
        try await PostgresTestCluster.withPools(connections: 1, logger: logger) { pools in
            let client = pools[0].client
            for text in ["", "a", "a~", "Zé", "日本語", "a b", String(repeating: "x", count: 300)] {
                let sql = "SELECT " + SQLDialect.postgres.builtInKey(.string, "CAST($1 AS text)")
                var bindings = PostgresBindings()
                bindings.append(text)
                for try await key in try await client.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
                    .decode(ByteBuffer.self)
                {
                    #expect(Array(key.readableBytesView) == Value.string(text).sortKey, "\(text)")
                }
            }
            for milliseconds: Int64 in [.min, -62_135_596_800_000, -1, 0, 1, 1_700_000_000_123, .max] {
                let sql = "SELECT " + SQLDialect.postgres.builtInKey(.date, "CAST($1 AS bigint)")
                var bindings = PostgresBindings()
                bindings.append(milliseconds)
                for try await key in try await client.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
                    .decode(ByteBuffer.self)
                {
                    #expect(Array(key.readableBytesView) == Value.date(Timestamp(millisecondsSinceEpoch: milliseconds)).sortKey, "\(milliseconds)")
                }
            }
        }
    }

    @Test("a database whose transaction IDs went back below its numbers (restored into another cluster) is given a new origin at start-up: new changes come after the old",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func reoriginAfterRestore() async throws {
        let logger = self.logger
        try await TestPostgres.withDatabase { url in
            try await Self.withStorage(url: url, logger: logger) { storage in
                try await storage.prepare()
                let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
                let before = try await StorageWrites.put(StorageConformance.object("before"), datastoreKey: key, into: storage)
                // As if the cluster's transaction IDs were far behind the ones it was numbered with.
                try await storage.pool.client.query("UPDATE feed_origin SET origin = origin - 1099511627776", logger: logger)
                try await storage.prepare()
                let after = try await StorageWrites.put(StorageConformance.object("after"), datastoreKey: key, into: storage)
                #expect(after.sequence > before.sequence)
                let pulled = try await storage.changes(datastoreKey: key, after: before.sequence, limit: 100, classes: nil)
                #expect(pulled.map(\.objectId) == ["after"])
                // Nothing moves when the numbers are ahead.
                var origins: [Int64] = []
                for _ in 0..<2 {
                    try await storage.prepare()
                    for try await origin in try await storage.pool.client.query("SELECT origin FROM feed_origin", logger: logger)
                        .decode(Int64.self)
                    {
                        origins.append(origin)
                    }
                }
                #expect(origins.count == 2 && origins[0] == origins[1])
            }
        }
    }

    /// Runs `body` with a storage of `url` (4 connections), closed on every path.
    /// Runs `body` with a prepared storage on a database of its own, and a reader of one
    /// `count(*)`-like integer its SQL selects.
    static func withPreparedStorage(
        logger: Logger, _ body: (PostgresStorage, _ count: (String) async throws -> Int64) async throws -> Void
    ) async throws {
        try await TestPostgres.withDatabase { url in
            try await withStorage(url: url, logger: logger) { storage in
                try await storage.prepare()
                let client = storage.pool.client
                try await body(storage) { sql in
                    var found: Int64 = -1
                    for try await value in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                        .decode(Int64.self)
                    {
                        found = value
                    }
                    return found
                }
            }
        }
    }

    static func withStorage(url: String, logger: Logger, _ body: (PostgresStorage) async throws -> Void) async throws {
        let storage = try PostgresStorage(url: url, maximumConnections: 4, logger: logger)
        do {
            try await body(storage)
            try await storage.close()
        } catch {
            try? await storage.close()
            throw error
        }
    }

    @Test("a postgres:// URL opens the PostgreSQL storage; a malformed one or a bad schema is refused clearly")
    func factoryOpensPostgres() async throws {
        for url in ["postgres://u@h/d", "postgresql://u@h/d?sslmode=disable&schema=tenant_1"] {
            // Nothing connects until the storage is used.
            let storage = try StorageFactory.open(url: url)
            #expect(storage is PostgresStorage)
            try await storage.close()
        }
        #expect((try PostgresPool.configuration(url: "postgres://u@h/d?schema=Tenant_1")).options
            .additionalStartupParameters.contains { $0 == ("search_path", "tenant_1") })
        for (url, message) in [
            ("postgres://h/d", "no user"), ("postgres://u@/d", "no host"), ("postgres://u@h/", "no database"),
            ("postgres://u@h/d?schema=a-b", "schema"), ("postgres://u@h/d?schema=1a", "schema"),
            ("postgres://u@h/d?sslmode=maybe", "sslmode"),
        ] {
            #expect {
                _ = try StorageFactory.open(url: url)
            } throws: { error in
                (error as? RooftopError)?.code == .illegalArgument
                    && (error as? RooftopError)?.message.contains(message) == true
            }
        }
    }

    @Test("storage URLs: what they name, and clear refusals")
    func urls() throws {
        let configuration = try PostgresPool.configuration(
            url: "postgres://rooftop:s%40cret@db.internal:6543/rooftop?sslmode=disable")
        #expect(configuration.host == "db.internal")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "rooftop")
        #expect(configuration.password == "s@cret")
        #expect(configuration.database == "rooftop")
        #expect(try PostgresPool.configuration(url: "postgresql://u@h/d").port == 5432)
        for bad in [
            "sqlite:/tmp/x.sqlite", "postgres://h/d", "postgres://u@/d", "postgres://u@h", "postgres://u@h/d?sslmode=maybe",
            "postgres://u@h:70000/d",
        ] {
            #expect(throws: RooftopError.self, "\(bad)") { try PostgresPool.configuration(url: bad) }
        }
    }
}
