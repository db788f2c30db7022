import Foundation
import GRDB
import RooftopSQLite
import RooftopShared

/// The JSON body of a stored object: everything not kept in its own column.
struct StoredObjectBody: Codable {
    var fields: [String: Value]
    var acl: ACL?
    var fieldVersions: [String: Int64]?

    /// The body's JSON, written directly (``DocumentWriter``).
    /// - Throws: What `JSONEncoder` throws for the values it writes.
    func encodedDocument() throws -> String {
        var writer = DocumentWriter()
        writer.raw("{\"fields\":")
        try writer.fields(fields)
        if let acl {
            writer.raw(",\"acl\":")
            writer.acl(acl)
        }
        if let fieldVersions {
            writer.raw(",\"fieldVersions\":")
            writer.fieldVersions(fieldVersions)
        }
        writer.raw("}")
        return writer.text
    }

    /// A body from its stored JSON, read directly when it can be (``DocumentReader``).
    /// - Throws: What `JSONDecoder` throws for text that is not a body.
    static func decodeDocument(_ text: String) throws -> StoredObjectBody {
        try DocumentCoding.decode(StoredObjectBody.self, from: text) { reader in
            var fields: [String: Value]?
            var body = StoredObjectBody(fields: [:])
            try reader.readObject { reader, key in
                switch key {
                case "fields": fields = try reader.readFields()
                case "acl": body.acl = try reader.readNull() ? nil : try reader.readACL()
                case "fieldVersions": body.fieldVersions = try reader.readNull() ? nil : try reader.readFieldVersions()
                default: throw DocumentReader.Unhandled()
                }
            }
            guard let fields else { throw DocumentReader.Unhandled() }
            body.fields = fields
            return body
        }
    }
}

extension SQLiteStorage {
    /// See ``ObjectStorage/object(datastoreKey:className:objectId:)``.
    public func object(datastoreKey: Int64, className: String, objectId: String) async throws -> StoredObject? {
        try pointRead { db in
            try Self.object(db, datastoreKey: datastoreKey, className: className, objectId: objectId)?.object
        }
    }

    /// See ``ObjectStorage/objects(datastoreKey:pointers:)``.
    public func objects(datastoreKey: Int64, pointers: [Pointer]) async throws -> [StoredObject] {
        guard !pointers.isEmpty else { return [] }
        return try await pool.read { db in
            var found: [StoredObject] = []
            for pointer in pointers {
                if let row = try Self.object(
                    db, datastoreKey: datastoreKey, className: pointer.className, objectId: pointer.objectId),
                    !row.object.isDeleted
                {
                    found.append(row.object)
                }
            }
            return found
        }
    }

    /// The object `objectId` of a class and datastore, with its readers, in one statement
    /// (``storedObjectColumns``): what a REST read and a write of it start from.
    static func object(_ db: Database, datastoreKey: Int64, className: String, objectId: String) throws
        -> (key: Int64, object: StoredObject)?
    {
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(storedObjectColumns) FROM \(feedFrom)
                WHERE o.datastore_key = ? AND o.class_name = ? AND o.object_id = ?
                """)
        let cursor = try Row.fetchCursor(statement, arguments: [datastoreKey, className, objectId])
        // The row is read while the cursor stands on it (its end resets the statement).
        return try withExtendedLifetime(cursor) {
            guard try cursor.next() != nil else { return nil }
            let row = CurrentRow(statement)
            let object = try ObjectRow(positional: row)
            let (current, former) = try storedReaders(of: object, row)
            return (object.key, try object.stored(current: current, former: former))
        }
    }

    /// The columns of an object's row with its readers, read by ``storedReaders(of:_:)``:
    /// ``ObjectRow/positionalColumns``, then the object's reader set and its principals (from
    /// ``feedFrom``), the readers' history rows without an end and those whose access ended
    /// (JSON arrays, `NULL` when there are none: most objects have no history rows). The same
    /// readers as PostgreSQL's `storedObjectSelect`.
    static let storedObjectColumns = ObjectRow.positionalColumns + """
        , o.readers, s.principals, \
        (SELECT json_group_array(CAST(r.principal AS TEXT)) FROM object_readers r
            WHERE r.object_key = o.key AND r.to_sequence IS NULL HAVING count(*) > 0), \
        (SELECT json_group_array(CAST(r.principal AS TEXT)) FROM object_readers r
            WHERE r.object_key = o.key AND r.to_sequence IS NOT NULL HAVING count(*) > 0)
        """

    /// An object's current and former readers from a row of ``storedObjectColumns``: a live
    /// object's current readers are its reader set's principals and the history's rows without an
    /// end (readers its set does not name); a tombstone's are those rows alone; its former readers
    /// add the rows whose access ended (``ReaderHistoryWrite``). A live object naming a set that
    /// is not stored (damaged data: sets are kept while an object names them) gets no readers
    /// from it, as on PostgreSQL (and as before this read was one statement): a write with a new
    /// ACL still mends it.
    /// - Throws: `internal` when a set or a history column is not a list of principals.
    static func storedReaders(of object: ObjectRow, _ row: CurrentRow) throws -> (current: Set<String>, former: Set<String>) {
        func principals(_ text: String?, _ what: @autoclosure () -> String) throws -> [String] {
            guard let text else { return [] }
            do {
                return try DocumentCoding.decode([String].self, from: text)
            } catch {
                throw RooftopError(.internal, "\(what()) of object \(object.key) is not a list of principals")
            }
        }
        var current: Set<String> = []
        if !object.deleted, let readerSet = row.optionalInt64(10) {
            current = Set(try principals(try row.optionalText(11), "reader set \(readerSet)"))
        }
        current.formUnion(try principals(try row.optionalText(12), "the open readers' history"))
        return (current, current.union(try principals(try row.optionalText(13), "the ended readers' history")))
    }

    /// The columns of a change feed's row, read by ``feedObjects(_:arguments:)``: ``ObjectRow/positionalColumns``,
    /// then the object's reader set and its principals, a tombstone's readers, and the principals
    /// the readers' history adds (``FeedReaders``; JSON arrays, the last `NULL` when it adds
    /// none). `FROM` ``feedFrom``.
    ///
    /// Most objects have no history rows (a creation writes none, ``ReaderHistoryWrite``): the
    /// last column's aggregate, whose `DISTINCT` makes SQLite open a temporary index for every
    /// row it runs on, runs only for an object that has some. Over a full pull of 100,000 objects
    /// with none, the statement ran 5,100 fewer instructions a row (`callgrind`: 6,300 for the
    /// aggregate, 1,200 for the test).
    static let feedColumns = ObjectRow.positionalColumns + """
        , o.readers, s.principals, \
        CASE WHEN o.deleted THEN (SELECT json_group_array(r.principal) FROM object_readers r
            WHERE r.object_key = o.key AND r.to_sequence IS NULL) END, \
        CASE WHEN EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key) THEN
            (SELECT json_group_array(DISTINCT r.principal) FROM object_readers r
            WHERE r.object_key = o.key AND (r.to_sequence IS NOT NULL OR o.deleted) HAVING count(*) > 0) END
        """

    /// The tables ``feedColumns`` reads.
    static let feedFrom =
        "objects o JOIN datastores d ON d.key = o.datastore_key LEFT JOIN reader_sets s ON s.id = o.readers"

    /// The feed objects of the rows of `statement` (selecting ``feedColumns``) with `arguments`,
    /// their bodies not decoded.
    /// - Throws: What reading a row throws; `internal` for a reader set that cannot be read.
    static func feedObjects(_ statement: Statement, arguments: StatementArguments) throws -> [FeedObject] {
        var readers = FeedReaders()
        var objects: [FeedObject] = []
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        let row = CurrentRow(statement)
        while try cursor.next() != nil {
            let object = try ObjectRow(positional: row)
            let found = try readers.readers(
                readerSet: row.optionalInt64(10), setPrincipals: { try row.optionalText(11) },
                lastReaders: try row.optionalText(12).map { try DocumentCoding.decode([String].self, from: $0) },
                historyReaders: try row.optionalText(13).map { try DocumentCoding.decode([String].self, from: $0) } ?? [])
            objects.append(object.feedObject(current: found.current, former: found.former))
        }
        return objects
    }

    /// The object an `objects` row holds (joined with its datastore's `id` as `datastore_id`),
    /// without its readers: what a query answers.
    static func snapshot(from row: Row) throws -> ObjectSnapshot {
        try ObjectRow(row).snapshot()
    }

    /// See ``ObjectStorage/operations(datastoreKey:className:objectId:after:)``.
    public func operations(datastoreKey: Int64, className: String, objectId: String, after version: Int64) async throws
        -> [OperationRecord]
    {
        try await pool.read { db in
            try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT p.operation FROM object_operations p JOIN objects o ON o.key = p.object_key
                        WHERE o.datastore_key = ? AND o.class_name = ? AND o.object_id = ? AND p.version > ?
                        ORDER BY p.version
                        """),
                arguments: [datastoreKey, className, objectId, version]
            ).map { try StoredOperation.record(from: $0) }
        }
    }
}
