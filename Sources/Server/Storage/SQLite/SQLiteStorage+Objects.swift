import Foundation
import GRDB
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
    /// See ``Storage/object(datastoreKey:className:objectId:)``.
    public func object(datastoreKey: Int64, className: String, objectId: String) async throws -> StoredObject? {
        try pointRead { db in
            try Self.object(db, datastoreKey: datastoreKey, className: className, objectId: objectId)?.object
        }
    }

    /// See ``Storage/objects(datastoreKey:pointers:)``.
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

    static func object(_ db: Database, datastoreKey: Int64, className: String, objectId: String) throws
        -> (key: Int64, object: StoredObject)?
    {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT o.*, d.id AS datastore_id FROM objects o JOIN datastores d ON d.key = o.datastore_key
                        WHERE o.datastore_key = ? AND o.class_name = ? AND o.object_id = ?
                        """),
                arguments: [datastoreKey, className, objectId])
        else { return nil }
        return (row["key"], try storedObject(from: row, db))
    }

    /// Decodes an `objects` row joined with its datastore's `id` as `datastore_id`, with its readers.
    static func storedObject(from row: Row, _ db: Database) throws -> StoredObject {
        try storedObjects(from: [row], db)[0]
    }

    /// Decodes `objects` rows (joined with their datastore's `id` as `datastore_id`) with their
    /// readers, read for the whole batch at once (one statement, not one per object).
    static func storedObjects(from rows: [Row], _ db: Database) throws -> [StoredObject] {
        let readers = try self.readers(of: rows.map { $0["key"] }, db)
        return try rows.map { row in
            let found = readers[row["key"]] ?? ([], [])
            return try ObjectRow(row).stored(current: found.current, former: found.former)
        }
    }

    /// The columns of a change feed's row, read by ``feedObjects(_:)``: ``ObjectRow/positionalColumns``,
    /// then the object's reader set and its principals, a tombstone's readers, and the principals
    /// the readers' history adds (``FeedReaders``; JSON arrays, the last `NULL` when it adds
    /// none). `FROM` ``feedFrom``.
    static let feedColumns = ObjectRow.positionalColumns + """
        , o.readers, s.principals, \
        CASE WHEN o.deleted THEN (SELECT json_group_array(r.principal) FROM object_readers r
            WHERE r.object_key = o.key AND r.to_sequence IS NULL) END, \
        (SELECT json_group_array(DISTINCT r.principal) FROM object_readers r
            WHERE r.object_key = o.key AND (r.to_sequence IS NOT NULL OR o.deleted) HAVING count(*) > 0)
        """

    /// The tables ``feedColumns`` reads.
    static let feedFrom =
        "objects o JOIN datastores d ON d.key = o.datastore_key LEFT JOIN reader_sets s ON s.id = o.readers"

    /// The feed objects of the rows of a statement selecting ``feedColumns``, their bodies not
    /// decoded.
    /// - Throws: What reading a row throws; `internal` for a reader set that cannot be read.
    static func feedObjects(_ cursor: RowCursor) throws -> [FeedObject] {
        var readers = FeedReaders()
        var objects: [FeedObject] = []
        while let row = try cursor.next() {
            let object = ObjectRow(positional: row)
            let found = try readers.readers(
                readerSet: row[10], setPrincipals: { row[11] },
                lastReaders: try (row[12] as String?).map { try DocumentCoding.decode([String].self, from: $0) },
                historyReaders: try (row[13] as String?).map { try DocumentCoding.decode([String].self, from: $0) } ?? [])
            objects.append(object.feedObject(current: found.current, former: found.former))
        }
        return objects
    }

    /// The current and former readers of the objects of `keys`, by object key: one prepared
    /// statement (the keys as one JSON array), its columns read by position. A live object's
    /// current readers are its reader set's principals, the readers' history adds those whose
    /// access ended; a tombstone's are its history's rows without an end
    /// (``SQLiteObjectWriter``'s `storeReaderHistory`). (The change feed reads readers with its
    /// rows instead, ``feedColumns``.)
    private static func readers(of keys: [Int64], _ db: Database) throws
        -> [Int64: (current: Set<String>, former: Set<String>)]
    {
        var readers: [Int64: (current: Set<String>, former: Set<String>)] = [:]
        guard !keys.isEmpty else { return readers }
        let statement = try db.cachedStatement(
            sql: """
                SELECT object_key, principal, to_sequence IS NULL FROM object_readers
                WHERE object_key IN (SELECT value FROM json_each(?1))
                UNION ALL
                SELECT o.key, p.value, 1 FROM objects o JOIN reader_sets s ON s.id = o.readers, json_each(s.principals) p
                WHERE o.key IN (SELECT value FROM json_each(?1)) AND o.deleted = 0
                """)
        let list = "[" + keys.map(String.init).joined(separator: ",") + "]"
        let cursor = try Row.fetchCursor(statement, arguments: [list])
        while let reader = try cursor.next() {
            let key: Int64 = reader[0]
            let principal: String = reader[1]
            let isCurrent: Bool = reader[2]
            readers[key, default: ([], [])].former.insert(principal)
            if isCurrent { readers[key, default: ([], [])].current.insert(principal) }
        }
        return readers
    }

    /// The object an `objects` row holds (joined with its datastore's `id` as `datastore_id`),
    /// without its readers: what a query answers.
    static func snapshot(from row: Row) throws -> ObjectSnapshot {
        try ObjectRow(row).snapshot()
    }

    /// See ``Storage/operations(datastoreKey:className:objectId:after:)``.
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
            ).map { try DocumentCoding.decode(OperationRecord.self, from: $0) }
        }
    }
}
