import PostgresNIO
import RooftopSQL

/// The statements of a push written as a batch (``PostgresObjectWriter/Batch``): what its
/// mutations read, read ahead in one statement per table, and what they write, in one statement
/// per kind of row for the whole push. Their SQL is constant: the rows go as arrays to `unnest`.
extension PostgresStatements {
    /// The tables of an object's own rows, which name it by key without a foreign key (migration
    /// v8): whatever deletes objects deletes their rows in these too, in the statement that
    /// deletes them (``objectRowDeletes``: the history sweep's tombstones, a datastore's deletion).
    static let objectRowTables = ["object_fields", "object_elements", "object_readers", "object_operations"]

    /// The `WITH` clauses that delete the rows of the objects whose keys a `doomed` clause before
    /// them gives, one per table of ``objectRowTables``, comma-separated.
    static let objectRowDeletes = objectRowTables.enumerated().map { index, table in
        "rows\(index) AS (DELETE FROM \(table) WHERE object_key IN (SELECT key FROM doomed))"
    }.joined(separator: ", ")

    /// Objects by datastore, class and ID: each row's datastore key, then the columns of
    /// ``PostgresStorage/setObjectSelect`` (the object, its reader set and its readers' history),
    /// read by ``PostgresStorage/storedObject(_:from:sets:)``.
    struct ObjectsByName: PostgresRowStatement {
        static let sql = "SELECT o.datastore_key, " + PostgresStorage.setObjectSelect.dropFirst("SELECT ".count) + """
             JOIN unnest($1::bigint[], $2::text[], $3::text[]) AS p(datastore_key, class_name, object_id)
            ON o.datastore_key = p.datastore_key AND o.class_name = p.class_name AND o.object_id = p.object_id
            """
        var datastoreKeys: [Int64]
        var classNames: [String]
        var objectIds: [String]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(datastoreKeys)
            bindings.append(classNames)
            bindings.append(objectIds)
            return bindings
        }
    }

    /// The results recorded for mutation IDs of one scope, with the objects they left.
    struct RecordedResults: PostgresRowStatement {
        static let sql = PostgresObjectWriter.resultSelect + " WHERE m.scope = $1::text AND m.mutation_id = ANY($2::text[])"
        var scope: String
        var mutationIds: [String]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(scope)
            bindings.append(mutationIds)
            return bindings
        }
    }

    /// The index rows (and element rows) of the fields a batch's writes change, deleted before
    /// the new rows of the same fields are written (inside one statement they would collide).
    struct RemoveFieldsBatch: PostgresCommandStatement {
        static let sql = """
            WITH e AS (DELETE FROM object_elements x USING unnest($1::bigint[], $2::text[]) AS r(object_key, field)
            WHERE x.object_key = r.object_key AND x.field = r.field)
            DELETE FROM object_fields x USING unnest($3::bigint[], $4::text[]) AS r(object_key, field)
            WHERE x.object_key = r.object_key AND x.field = r.field
            """
        var elements: [(key: Int64, field: String)]
        var fields: [(key: Int64, field: String)]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(elements.map(\.key))
            bindings.append(elements.map(\.field))
            bindings.append(fields.map(\.key))
            bindings.append(fields.map(\.field))
            return bindings
        }
    }

    /// A batch's new objects' rows; answers each one's key with its name.
    struct InsertObjects: PostgresRowStatement {
        static let sql = """
            INSERT INTO objects (body, created_at, updated_at, version, sequence, deleted, size_bytes,
            datastore_key, class_name, object_id, readers)
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[],
            $7::bigint[], $8::bigint[], $9::text[], $10::text[], $11::bigint[])
            RETURNING key, datastore_key, class_name, object_id
            """
        var stores: [PostgresObjectWriter.Batch.Store]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 11)
            PostgresStatements.appendObjectColumns(stores, to: &bindings)
            bindings.append(stores.map(\.plan.datastoreKey))
            bindings.append(stores.map(\.plan.className))
            bindings.append(stores.map(\.plan.objectId))
            bindings.append(PostgresInt8Array(stores.map(\.readers)))
            return bindings
        }
    }

    /// The seven columns of an object's row a write sets, from `body` to `size_bytes`.
    fileprivate static func appendObjectColumns(
        _ stores: [PostgresObjectWriter.Batch.Store], to bindings: inout PostgresBindings
    ) {
        bindings.append(stores.map(\.plan.body))
        bindings.append(PostgresInt8Array(stores.map(\.plan.createdAt)))
        bindings.append(PostgresInt8Array(stores.map(\.plan.updatedAt)))
        bindings.append(stores.map(\.plan.version))
        bindings.append(stores.map(\.plan.sequence))
        bindings.append(stores.map(\.plan.deleted))
        bindings.append(stores.map(\.plan.size))
    }

    /// The nine arrays of index rows to insert (`object_fields`' six columns, then
    /// `object_elements`' three), each row with its object's key.
    fileprivate static func appendIndexRows(
        _ fields: [(key: Int64, row: SQLIndexRows.FieldRow)], to bindings: inout PostgresBindings
    ) {
        bindings.append(fields.map(\.key))
        bindings.append(fields.map(\.row.field))
        bindings.append(fields.map(\.row.kind))
        bindings.append(PostgresByteaArray(fields.map(\.row.sortKey)))
        bindings.append(PostgresDoubleArray(fields.map(\.row.latitude)))
        bindings.append(PostgresDoubleArray(fields.map(\.row.longitude)))
        let elements = fields.flatMap { key, row in row.elements.map { (key, row.field, $0) } }
        bindings.append(elements.map(\.0))
        bindings.append(elements.map(\.1))
        bindings.append(PostgresByteaArray(elements.map(\.2)))
    }

    /// Index rows and their elements' rows, inserted (a rebuild's, ``RowFields``): the same
    /// statements as ``StoreRows``' `f` and `e`.
    struct InsertIndexRows: PostgresCommandStatement {
        static let sql = """
            WITH f AS (INSERT INTO object_fields (object_key, field, kind, sort_key, latitude, longitude)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bytea[], $5::float8[], $6::float8[]))
            INSERT INTO object_elements (object_key, field, element_key)
            SELECT * FROM unnest($7::bigint[], $8::text[], $9::bytea[]) ON CONFLICT DO NOTHING
            """
        var rows: [(key: Int64, row: SQLIndexRows.FieldRow)]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 9)
            PostgresStatements.appendIndexRows(rows, to: &bindings)
            return bindings
        }
    }

    /// Everything else a batch writes, once its new objects have their keys: the existing
    /// objects' rows, and every written object's index rows, elements, readers' history and
    /// operation, and the mutations' results. Answers how many existing rows it updated.
    struct StoreRows: PostgresRowStatement {
        static let sql = """
            WITH u AS (UPDATE objects o SET body = v.body, created_at = v.created_at, updated_at = v.updated_at,
            version = v.version, sequence = v.sequence, deleted = v.deleted, size_bytes = v.size_bytes, readers = v.readers
            FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[], $7::bigint[],
            $8::bigint[], $9::bigint[], $10::text[], $11::bigint[])
            AS v(body, created_at, updated_at, version, sequence, deleted, size_bytes, key, datastore_key, class_name, readers)
            WHERE o.key = v.key AND o.datastore_key = v.datastore_key AND o.class_name = v.class_name RETURNING o.key),
            f AS (INSERT INTO object_fields (object_key, field, kind, sort_key, latitude, longitude)
            SELECT * FROM unnest($12::bigint[], $13::text[], $14::bigint[], $15::bytea[], $16::float8[], $17::float8[])),
            e AS (INSERT INTO object_elements (object_key, field, element_key)
            SELECT * FROM unnest($18::bigint[], $19::text[], $20::bytea[]) ON CONFLICT DO NOTHING),
            re AS (UPDATE object_readers r SET to_sequence = v.sequence
            FROM unnest($21::bigint[], $22::text[], $23::bigint[]) AS v(object_key, principal, sequence)
            WHERE r.object_key = v.object_key AND r.principal = v.principal AND r.to_sequence IS NULL),
            rd AS (DELETE FROM object_readers r USING unnest($24::bigint[], $25::text[]) AS v(object_key, principal)
            WHERE r.object_key = v.object_key AND r.principal = v.principal AND r.to_sequence IS NULL),
            rs AS (INSERT INTO object_readers (object_key, principal, from_sequence, to_sequence)
            SELECT * FROM unnest($26::bigint[], $27::text[], $28::bigint[], $29::bigint[])),
            p AS (INSERT INTO object_operations (object_key, version, operation, sequence)
            SELECT * FROM unnest($30::bigint[], $31::bigint[], $32::text[], $33::bigint[])
            ON CONFLICT (object_key, version) DO UPDATE SET operation = excluded.operation, sequence = excluded.sequence),
            m AS (INSERT INTO mutation_results (scope, mutation_id, version, object_key, detail, created_at)
            SELECT * FROM unnest($34::text[], $35::text[], $36::bigint[], $37::bigint[], $38::text[], $39::bigint[])
            ON CONFLICT DO NOTHING)
            SELECT count(*) FROM u
            """
        /// Every store of the batch, each with its object's key.
        var stores: [(key: Int64, store: PostgresObjectWriter.Batch.Store)]
        var results: [MutationResultRow]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 39)
            let existing = stores.filter { $0.store.plan.existingKey != nil }
            PostgresStatements.appendObjectColumns(existing.map(\.store), to: &bindings)
            bindings.append(existing.map(\.key))
            bindings.append(existing.map(\.store.plan.datastoreKey))
            bindings.append(existing.map(\.store.plan.className))
            bindings.append(PostgresInt8Array(existing.map(\.store.readers)))

            PostgresStatements.appendIndexRows(
                stores.flatMap { key, store in store.plan.addedFields.map { (key, $0) } }, to: &bindings)

            // The readers' history (``ReaderHistoryWrite``): open rows ended, open rows
            // deleted, rows inserted (ended ones with their end).
            let closed = stores.flatMap { key, store in store.plan.readerHistory.closed.map { (key, $0, store.plan.sequence) } }
            bindings.append(closed.map(\.0))
            bindings.append(closed.map(\.1))
            bindings.append(closed.map(\.2))
            let dropped = stores.flatMap { key, store in store.plan.readerHistory.dropped.map { (key, $0) } }
            bindings.append(dropped.map(\.0))
            bindings.append(dropped.map(\.1))
            let inserted = stores.flatMap { key, store -> [(Int64, String, Int64, Int64?)] in
                let (history, sequence) = (store.plan.readerHistory, store.plan.sequence)
                return history.ended.map { (key, $0, sequence, sequence) } + history.opened.map { (key, $0, sequence, nil) }
            }
            bindings.append(inserted.map(\.0))
            bindings.append(inserted.map(\.1))
            bindings.append(inserted.map(\.2))
            bindings.append(PostgresInt8Array(inserted.map(\.3)))

            bindings.append(stores.map(\.key))
            bindings.append(stores.map(\.store.plan.operationVersion))
            bindings.append(stores.map(\.store.plan.operation))
            bindings.append(stores.map(\.store.plan.sequence))

            bindings.append(results.map(\.scope))
            bindings.append(results.map(\.mutationId))
            bindings.append(PostgresInt8Array(results.map(\.version)))
            bindings.append(PostgresInt8Array(results.map(\.objectKey)))
            bindings.append(PostgresTextArray(results.map(\.detail)))
            bindings.append(results.map(\.createdAt))
            return bindings
        }
    }
}
