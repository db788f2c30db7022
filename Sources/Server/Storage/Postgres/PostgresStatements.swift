import PostgresNIO
import RooftopSQL

/// The statements of the write path, prepared once per connection: a push runs them for every
/// mutation, and a prepared statement skips the parse and plan an unnamed one pays on each run.
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
    /// Locks a transaction's datastores, then its objects, each set in one order every
    /// transaction follows (by lock key), so that two writers never wait for each other in a
    /// cycle: transaction-scoped advisory locks, a datastore's shared (``exclusive``: alone in
    /// it), an object's exclusive, keyed by hashes of their names (`d` and the datastore's key;
    /// ``PostgresObjectWriter/Locks/objectName(_:)``, which starts with a digit) seeded with the
    /// deployment's own value (``PostgresStorage/lockSeed()``): deployments in other schemas of
    /// the database do not share keys, and nobody can aim an object ID at another's lock. The
    /// objects' locks are taken only once the datastores' are (the sub-query reads their count).
    struct LockWrites: PostgresRowStatement {
        static func text(exclusive: Bool) -> String {
            """
            SELECT (SELECT count(pg_advisory_xact_lock(o.k)) FROM (SELECT DISTINCT hashtextextended(n, $3::bigint) AS k
            FROM unnest($2::text[]) AS n ORDER BY 1) AS o WHERE d.locked >= 0)
            FROM (SELECT count(\(exclusive ? "pg_advisory_xact_lock" : "pg_advisory_xact_lock_shared")(s.k)) AS locked
            FROM (SELECT DISTINCT hashtextextended('d' || k::text, $3::bigint) AS k FROM unnest($1::bigint[]) AS k
            ORDER BY 1) AS s) AS d
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
    /// its snapshot is taken after the locks' waits).
    struct DatastoreRow: DatastoreKeyStatement {
        static let sql = PostgresStorage.datastoreSelect + " WHERE d.key = $1::bigint"
        var key: Int64
    }

    /// ``DatastoreRow`` locked until commit, for a transaction alone in the datastore: its
    /// counters stay as read.
    struct DatastoreRowAlone: DatastoreKeyStatement {
        static let sql = PostgresStorage.datastoreSelect + " WHERE d.key = $1::bigint FOR NO KEY UPDATE OF d"
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

    /// A mutation's result, recorded once.
    struct InsertResult: PostgresCommandStatement {
        static let sql = """
            INSERT INTO mutation_results (scope, mutation_id, version, object_key, detail, created_at)
            VALUES ($1::text, $2::text, $3::bigint, $4::bigint, $5::text, $6::bigint) ON CONFLICT DO NOTHING
            """
        var row: MutationResultRow

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(row.scope)
            bindings.append(row.mutationId)
            bindings.append(row.version)
            bindings.append(row.objectKey)
            bindings.append(row.detail)
            bindings.append(row.createdAt)
            return bindings
        }
    }

    /// The index rows of an object's changed fields, removed before the new ones are written.
    struct RemoveFields: PostgresCommandStatement {
        static let sql = """
            WITH e AS (DELETE FROM object_elements WHERE object_key = $1::bigint AND field = ANY($2::text[]))
            DELETE FROM object_fields WHERE object_key = $1::bigint AND field = ANY($3::text[])
            """
        var objectKey: Int64
        var elements: [String]
        var fields: [String]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(objectKey)
            bindings.append(elements)
            bindings.append(fields)
            return bindings
        }
    }

    /// The clauses after the object's row (`o`): its index rows, elements, readers and
    /// operation. Parameters `$11` on; `$5` is the (provisional) sequence. The datastore's
    /// counters and unindexed counts are the transaction's end's (``PostgresObjectWriter/settle()``):
    /// rows every writer of the datastore shares, locked until commit once written.
    static let storeTail = """
        f AS (INSERT INTO object_fields (object_key, field, kind, sort_key, latitude, longitude)
        SELECT o.key, u.* FROM o, unnest($11::text[], $12::bigint[], $13::bytea[], $14::float8[], $15::float8[]) AS u),
        e AS (INSERT INTO object_elements (object_key, field, element_key)
        SELECT o.key, u.* FROM o, unnest($16::text[], $17::bytea[]) AS u ON CONFLICT DO NOTHING),
        re AS (UPDATE object_readers r SET to_sequence = $5::bigint FROM o
        WHERE r.object_key = o.key AND r.principal = ANY($18::text[]) AND r.to_sequence IS NULL),
        rs AS (INSERT INTO object_readers (object_key, principal, from_sequence)
        SELECT o.key, unnest($19::text[]), $5::bigint FROM o),
        p AS (INSERT INTO object_operations (object_key, version, operation, sequence)
        SELECT o.key, $20::bigint, $21::text, $5::bigint FROM o
        ON CONFLICT (object_key, version) DO UPDATE SET operation = excluded.operation, sequence = excluded.sequence)
        SELECT key FROM o
        """

    /// A new object's row and everything the plan writes with it, in one statement.
    struct StoreNew: PostgresRowStatement {
        static let sql = """
            WITH o AS (INSERT INTO objects (body, created_at, updated_at, version, sequence, deleted, size_bytes,
            datastore_key, class_name, object_id, readers) VALUES ($1::text, $2::bigint, $3::bigint, $4::bigint,
            $5::bigint, $6::boolean, $7::bigint, $8::bigint, $9::text, $10::text, $22::bigint) RETURNING key),
            """ + PostgresStatements.storeTail
        var plan: ObjectStorePlan
        /// The object's reader set (``PostgresStatements/ReaderSet``), `nil` when it has none.
        var readers: Int64?

        func makeBindings() -> PostgresBindings {
            PostgresStatements.storeBindings(plan, tenth: .objectId, readers: readers)
        }
    }

    /// An existing object's row (by key) and everything the plan writes with it, in one statement.
    struct StoreExisting: PostgresRowStatement {
        static let sql = """
            WITH o AS (UPDATE objects SET body = $1::text, created_at = $2::bigint, updated_at = $3::bigint,
            version = $4::bigint, sequence = $5::bigint, deleted = $6::boolean, size_bytes = $7::bigint,
            readers = $22::bigint WHERE key = $10::bigint AND datastore_key = $8::bigint AND class_name = $9::text RETURNING key),
            """ + PostgresStatements.storeTail
        var plan: ObjectStorePlan
        /// The object's reader set (``PostgresStatements/ReaderSet``), `nil` when it has none.
        var readers: Int64?

        func makeBindings() -> PostgresBindings {
            PostgresStatements.storeBindings(plan, tenth: .existingKey, readers: readers)
        }
    }

    enum Tenth { case objectId, existingKey }

    /// The 22 parameters of ``StoreNew`` and ``StoreExisting``.
    static func storeBindings(_ plan: ObjectStorePlan, tenth: Tenth, readers: Int64?) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 22)
        bindings.append(plan.body)
        bindings.append(plan.createdAt)
        bindings.append(plan.updatedAt)
        bindings.append(plan.version)
        bindings.append(plan.sequence)
        bindings.append(plan.deleted)
        bindings.append(plan.size)
        bindings.append(plan.datastoreKey)
        bindings.append(plan.className)
        switch tenth {
        case .objectId: bindings.append(plan.objectId)
        case .existingKey: bindings.append(plan.existingKey)
        }
        let fields = plan.addedFields
        bindings.append(fields.map(\.field))
        bindings.append(fields.map(\.kind))
        bindings.append(PostgresByteaArray(fields.map(\.sortKey)))
        bindings.append(PostgresDoubleArray(fields.map(\.latitude)))
        bindings.append(PostgresDoubleArray(fields.map(\.longitude)))
        let elements = fields.flatMap { row in row.elements.map { (row.field, $0) } }
        bindings.append(elements.map(\.0))
        bindings.append(PostgresByteaArray(elements.map(\.1)))
        bindings.append(plan.endedReaders)
        bindings.append(plan.startedReaders)
        bindings.append(plan.operationVersion)
        bindings.append(plan.operation)
        bindings.append(readers)
        return bindings
    }

    /// The ID of a reader set (by its text, ``SQLIndexRows/readerSetText(_:)``), made with its
    /// members (`$2`) when none is committed (or made by this transaction). Two transactions
    /// that make the same set at once each make their own, with the same members: texts are not
    /// unique, so that neither waits for the other's commit (a unique text would make the second
    /// wait until the first ends, and writers of one datastore would again take turns).
    struct ReaderSet: PostgresRowStatement {
        static let sql = """
            WITH found AS (SELECT id FROM reader_sets WHERE principals = $1::text ORDER BY id LIMIT 1),
            made AS (INSERT INTO reader_sets (principals) SELECT $1::text WHERE NOT EXISTS (SELECT 1 FROM found)
            RETURNING id),
            members AS (INSERT INTO reader_set_members (principal, reader_set) SELECT unnest($2::text[]), id FROM made)
            SELECT id, false FROM found UNION ALL SELECT id, true FROM made
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
