import PostgresNIO
import RooftopSQL

/// The statements of the write path, prepared once per connection: every push runs them, and a
/// prepared statement skips the parse and plan an unnamed one pays on each run.
/// Their SQL is constant (arrays stand for the variable parts: an empty array writes no row), and
/// every parameter is cast, so its type never depends on the first values bound (a `NULL` first
/// would leave it to inference).
protocol PostgresRowStatement: PostgresPreparedStatement where Row == PostgresRow {}

extension PostgresRowStatement {
    /// The row as it is (decoded by the caller).
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// A prepared statement of a datastore's row by its key.
protocol DatastoreKeyStatement: PostgresRowStatement {
    var key: Int64 { get }
}

extension DatastoreKeyStatement {
    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(key)
        return bindings
    }
}

/// A prepared statement that returns no rows.
protocol PostgresCommandStatement: PostgresPreparedStatement where Row == () {}

extension PostgresCommandStatement {
    func decodeRow(_ row: PostgresRow) throws {}
}

extension PostgresStatements {
    /// Locks a transaction's datastores and classes, then its objects, each set in one order every
    /// transaction follows (by lock key), so that two writers never wait for each other in a
    /// cycle: transaction-scoped advisory locks, a datastore's shared (``exclusive``: alone in
    /// it), a class's shared (a batch of a rebuild of its rows takes it exclusively, alone,
    /// ``PostgresStorage/rebuildRowsBatch(skipping:)``), an object's exclusive, keyed by hashes
    /// of their names (`d` and the datastore's key; `c` and the class's name;
    /// ``PostgresObjectWriter/Locks/objectName(_:)``, which starts with a digit) seeded with the
    /// deployment's own value (``PostgresStorage/lockSeed()``): deployments in other schemas of
    /// the database do not share keys, and nobody can aim an object ID at another's lock. The
    /// objects' locks are taken only once the datastores' are (the sub-query reads their count).
    /// Answers the first number of the transaction's range of changes (``FeedBase``), read once
    /// the locks are held (the answer is made only from rows that passed the `WHERE` on their
    /// count), so that the transaction ID is assigned after every lock it waited for.
    struct LockWrites: PostgresRowStatement {
        static func text(exclusive: Bool) -> String {
            """
            SELECT \(FeedBase.expression) FROM (
            SELECT (SELECT count(pg_advisory_xact_lock(o.k)) FROM (SELECT DISTINCT hashtextextended(n, $3::bigint) AS k
            FROM unnest($2::text[]) AS n ORDER BY 1) AS o WHERE d.locked >= 0) AS objects
            FROM (SELECT count(CASE WHEN s.datastore THEN \(exclusive ? "pg_advisory_xact_lock" : "pg_advisory_xact_lock_shared")(s.k)
            ELSE pg_advisory_xact_lock_shared(s.k) END) AS locked
            FROM (SELECT hashtextextended('d' || k::text, $3::bigint) AS k, true AS datastore FROM unnest($1::bigint[]) AS k
            UNION SELECT hashtextextended('c' || c, $3::bigint), false FROM unnest($4::text[]) AS c
            ORDER BY 1) AS s) AS d) AS l WHERE l.objects >= 0
            """
        }
        static let sql = text(exclusive: false)
        var locks: PostgresObjectWriter.Locks

        func makeBindings() -> PostgresBindings { locks.bindings }
    }

    /// ``LockWrites`` for a transaction alone in its datastores: their locks exclusive.
    struct LockWritesAlone: PostgresRowStatement {
        static let sql = LockWrites.text(exclusive: true)
        var locks: PostgresObjectWriter.Locks

        func makeBindings() -> PostgresBindings { locks.bindings }
    }

    /// A datastore's row, read once its write's locks are held (a statement of its own, so that
    /// its snapshot is taken after the locks' waits). Its sequence is the row's column, not the
    /// feed's head (``PostgresStorage/feedHead``): no write decision reads it.
    struct DatastoreRow: DatastoreKeyStatement {
        static let sql = PostgresStorage.datastoreSelect(sequence: "d.sequence") + " WHERE d.key = $1::bigint"
        var key: Int64
    }

    /// ``DatastoreRow`` locked until commit, for a transaction alone in the datastore: its
    /// counters stay as read.
    struct DatastoreRowAlone: DatastoreKeyStatement {
        static let sql =
            PostgresStorage.datastoreSelect(sequence: "d.sequence") + " WHERE d.key = $1::bigint FOR NO KEY UPDATE OF d"
        var key: Int64
    }

    /// The result recorded for a mutation ID, with the object it left.
    struct RecordedResult: PostgresRowStatement {
        static let sql = PostgresObjectWriter.resultSelect + " WHERE m.scope = $1::text AND m.mutation_id = $2::text"
        var scope: String
        var mutationId: String

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(scope)
            bindings.append(mutationId)
            return bindings
        }
    }

    /// An object by datastore, class and ID.
    struct ObjectByName: PostgresRowStatement {
        static let sql = PostgresStorage.storedObjectSelect
            + " WHERE o.datastore_key = $1::bigint AND o.class_name = $2::text AND o.object_id = $3::text"
        var datastoreKey: Int64
        var className: String
        var objectId: String

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(datastoreKey)
            bindings.append(className)
            bindings.append(objectId)
            return bindings
        }
    }

    /// An object's operations after a version, oldest first.
    struct OperationsAfter: PostgresRowStatement {
        static let sql =
            "SELECT operation FROM object_operations WHERE object_key = $1::bigint AND version > $2::bigint ORDER BY version"
        var objectKey: Int64
        var version: Int64

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(objectKey)
            bindings.append(version)
            return bindings
        }
    }

    /// The operations of several objects, each after its own version (`$1` the objects' keys,
    /// `$2` the versions, pairwise; one pair per object): each row's key and version asked for,
    /// then the operation, oldest first within a pair. Each pair reads its range of the primary
    /// key: `OFFSET 0` keeps the planner from flattening the lateral subquery into a hash join,
    /// which read the whole table (10 ms for 48 pairs over 48,000 operations, against 0.03 ms a
    /// pair read alone).
    struct OperationsAfterEach: PostgresRowStatement {
        static let sql = """
            SELECT p.k, p.v, o.operation FROM unnest($1::bigint[], $2::bigint[]) AS p(k, v)
            CROSS JOIN LATERAL (SELECT operation, version FROM object_operations
            WHERE object_key = p.k AND version > p.v OFFSET 0) AS o ORDER BY p.k, p.v, o.version
            """
        var objectKeys: [Int64]
        var versions: [Int64]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(objectKeys)
            bindings.append(versions)
            return bindings
        }
    }

    /// The ID of a reader set (by its text, ``SQLIndexRows/readerSetText(_:)``), made with its
    /// members (`$2`) when none is committed (or made by this transaction). Two transactions
    /// that make the same set at once each make their own, with the same members: texts are not
    /// unique, so that neither waits for the other's commit (a unique text would make the second
    /// wait until the first ends, and writers of one datastore would again take turns).
    ///
    /// A set found is locked `FOR KEY SHARE` until commit, so that a sweep deleting it waits and
    /// then sees the object that names it (``PostgresStorage/sweepReaderSets(now:)``); answers
    /// the ID and whether a sweep has marked the set unnamed (such a set is not cached).
    struct ReaderSet: PostgresRowStatement {
        static let sql = """
            WITH found AS (SELECT id, unnamed_since IS NOT NULL AS marked FROM reader_sets WHERE principals = $1::text
            ORDER BY id LIMIT 1 FOR KEY SHARE),
            made AS (INSERT INTO reader_sets (principals) SELECT $1::text WHERE NOT EXISTS (SELECT 1 FROM found)
            RETURNING id),
            members AS (INSERT INTO reader_set_members (principal, reader_set) SELECT unnest($2::text[]), id FROM made)
            SELECT id, marked FROM found UNION ALL SELECT id, false FROM made
            """
        var text: String
        var principals: [String]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(text)
            bindings.append(principals)
            return bindings
        }
    }
}

/// The prepared statements' namespace.
enum PostgresStatements {}
