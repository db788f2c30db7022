import Foundation
import GRDB
import RooftopShared

/// What the index stores of one value: its key and the keys of its list elements or relation
/// members, each only when no longer than ``Value/indexedKeyLimit``.
struct IndexedValue {
    /// The value's key, or `nil` when it is too long to index.
    var key: [UInt8]?
    /// The distinct keys of its elements (lists) or members (relations) short enough to index.
    var elements: Set<[UInt8]> = []
    /// Whether everything a query could ask of the value is indexed.
    var isComplete: Bool

    init(_ value: Value) {
        key = value.indexedSortKey
        isComplete = key != nil
        let all: [[UInt8]] =
            switch value {
            case .list(let elements): elements.map(\.sortKey)
            case .relation(let relation): relation.pointers.map { Value.pointer($0).sortKey }
            default: []
            }
        for element in all {
            if element.count <= Value.indexedKeyLimit { elements.insert(element) } else { isComplete = false }
        }
    }
}

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
        try await pool.read { db in
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

    /// The operations of a deleted object's last incarnation, oldest first: from the change that
    /// created it (the first operation, or the first after an earlier delete) through the delete.
    /// Empty when that history is not complete.
    static func deletedIncarnation(_ db: Database, objectKey: Int64) throws -> [OperationRecord] {
        let cursor = try String.fetchCursor(
            db.cachedStatement(sql: "SELECT operation FROM object_operations WHERE object_key = ? ORDER BY version DESC"),
            arguments: [objectKey])
        var found: [OperationRecord] = []
        while let text = try cursor.next() {
            let record = try DocumentCoding.decode(OperationRecord.self, from: text)
            if let later = found.first, record.version != later.version - 1 { return [] }  // a gap
            if !found.isEmpty, case .delete = record.change { return found }
            found.insert(record, at: 0)
        }
        return found.first?.version == 1 ? found : []
    }

    /// Decodes an `objects` row joined with its datastore's `id` as `datastore_id`, with its readers.
    static func storedObject(from row: Row, _ db: Database) throws -> StoredObject {
        try storedObjects(from: [row], db)[0]
    }

    /// Decodes `objects` rows (joined with their datastore's `id` as `datastore_id`) with their
    /// readers, read for the whole batch at once (one statement per 500 objects, not one each).
    static func storedObjects(from rows: [Row], _ db: Database) throws -> [StoredObject] {
        var readers: [Int64: (current: Set<String>, former: Set<String>)] = [:]
        let keys: [Int64] = rows.map { $0["key"] }
        for start in stride(from: 0, to: keys.count, by: 500) {
            let chunk = keys[start..<min(start + 500, keys.count)]
            let placeholders = repeatElement("?", count: chunk.count).joined(separator: ",")
            let cursor = try Row.fetchCursor(
                db,
                sql: "SELECT object_key, principal, to_sequence FROM object_readers WHERE object_key IN (\(placeholders))",
                arguments: StatementArguments(Array(chunk)))
            while let reader = try cursor.next() {
                let key: Int64 = reader["object_key"]
                let principal: String = reader["principal"]
                readers[key, default: ([], [])].former.insert(principal)
                if (reader["to_sequence"] as Int64?) == nil { readers[key, default: ([], [])].current.insert(principal) }
            }
        }
        return try rows.map { row in
            let found = readers[row["key"]] ?? ([], [])
            return StoredObject(
                snapshot: try snapshot(from: row), isDeleted: (row["deleted"] as Int64) != 0, sequence: row["sequence"],
                readers: found.current, formerReaders: found.former)
        }
    }

    /// The object an `objects` row holds (joined with its datastore's `id` as `datastore_id`),
    /// without its readers: what a query answers.
    static func snapshot(from row: Row) throws -> ObjectSnapshot {
        let body = try StoredObjectBody.decodeDocument(row["body"])
        return ObjectSnapshot(
            className: row["class_name"], objectId: row["object_id"], datastore: try DatastoreID(row["datastore_id"]),
            fields: body.fields, acl: body.acl,
            createdAt: (row["created_at"] as Int64?).map(Timestamp.init(millisecondsSinceEpoch:)),
            updatedAt: (row["updated_at"] as Int64?).map(Timestamp.init(millisecondsSinceEpoch:)),
            version: row["version"], fieldVersions: body.fieldVersions)
    }

    /// One object write inside the caller's transaction (see ``ObjectWriter/write(_:decide:)``).
    static func writeObject(
        _ db: Database, _ request: ObjectWriteRequest, at time: Timestamp,
        decide: (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) throws -> ObjectWriteOutcome {
        if let mutation = request.mutation,
            let recorded = try Self.recordedResult(db, scope: mutation.scope, id: mutation.id)
        {
            return .replayed(recorded)
        }
        guard
            let datastore = try Self.datastore(
                db, sql: "SELECT * FROM datastores WHERE key = ?", arguments: [request.datastoreKey])
        else { throw RooftopError(.notFound, "the datastore no longer exists") }
        let existing = try Self.object(
            db, datastoreKey: request.datastoreKey, className: request.className, objectId: request.objectId)
        var concurrent: [OperationRecord] = []
        var historyExpired = false
        if let existing, let base = request.baseVersion, base < existing.object.snapshot.version {
            concurrent = try String.fetchAll(
                db.cachedStatement(
                    sql: "SELECT operation FROM object_operations WHERE object_key = ? AND version > ? ORDER BY version"),
                arguments: [existing.key, base]
            ).map { try DocumentCoding.decode(OperationRecord.self, from: $0) }
            historyExpired = !OperationRecord.complete(
                concurrent, after: base, through: existing.object.snapshot.version)
        } else if let existing, existing.object.isDeleted, request.baseVersion == nil {
            concurrent = try Self.deletedIncarnation(db, objectKey: existing.key)
        } else if existing == nil, request.baseVersion != nil, datastore.historyFrom > 0 {
            // Based on a version of an object that is not stored: its tombstone may have been swept.
            historyExpired = true
        }
        let context = ObjectWriteContext(
            datastore: datastore, current: existing?.object, concurrentChanges: concurrent,
            historyExpired: historyExpired)
        let decision: ObjectWriteDecision
        do throws(RooftopError) {
            decision = try decide(context)
        } catch {
            decision = .reject(error)
        }
        switch decision {
        case .reject(let error):
            if let mutation = request.mutation {
                try Self.recordMutation(
                    db, scope: mutation.scope, id: mutation.id, result: .rejected(mutationId: mutation.id, error: error),
                    objectKey: nil, at: time)
            }
            return .rejected(error)
        case .unchanged(let version, let object, let merges):
            let result = MutationResult.applied(
                mutationId: request.mutation?.id ?? MutationID.generate(), version: version, object: object,
                merges: merges)
            if let mutation = request.mutation {
                try Self.recordMutation(
                    db, scope: mutation.scope, id: mutation.id, result: result, objectKey: existing?.key, at: time)
            }
            return .unchanged(result)
        case .write(let snapshot, let deleted, let operation, let merges):
            let sequence = datastore.sequence + 1
            let (objectKey, stored) = try Self.store(
                db, snapshot: snapshot, deleted: deleted, operation: operation, sequence: sequence,
                datastore: datastore, existing: existing)
            let result = MutationResult.applied(
                mutationId: request.mutation?.id ?? MutationID.generate(), version: snapshot.version,
                object: deleted ? nil : snapshot, merges: merges)
            if let mutation = request.mutation {
                try Self.recordMutation(
                    db, scope: mutation.scope, id: mutation.id, result: result, objectKey: objectKey, at: time)
            }
            return .written(stored, readersBefore: existing?.object.readers ?? [], result: result)
        }
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

    /// Writes the object row, its index rows, reader history, operation log and the datastore's
    /// counters, all inside the caller's transaction. Returns the object's row key and its state.
    private static func store(
        _ db: Database, snapshot: ObjectSnapshot, deleted: Bool, operation: OperationRecord, sequence: Int64,
        datastore: DatastoreRecord, existing: (key: Int64, object: StoredObject)?
    ) throws -> (Int64, StoredObject) {
        let body = StoredObjectBody(
            fields: deleted ? [:] : snapshot.fields, acl: snapshot.acl, fieldVersions: snapshot.fieldVersions)
        let size = deleted ? 0 : SizeAccounting.recordSize(snapshot)
        let arguments: [DatabaseValue] = [
            try body.encodedDocument().databaseValue,
            snapshot.createdAt?.millisecondsSinceEpoch.databaseValue ?? .null,
            snapshot.updatedAt?.millisecondsSinceEpoch.databaseValue ?? .null,
            snapshot.version.databaseValue, sequence.databaseValue, (deleted ? 1 : 0).databaseValue, size.databaseValue,
        ]
        let key: Int64
        if let existing {
            key = existing.key
            try db.cachedStatement(
                sql: """
                    UPDATE objects SET body = ?, created_at = ?, updated_at = ?, version = ?, sequence = ?,
                    deleted = ?, size_bytes = ? WHERE key = ?
                    """
            ).execute(arguments: StatementArguments(arguments + [key.databaseValue]))
        } else {
            try db.cachedStatement(
                sql: """
                    INSERT INTO objects (body, created_at, updated_at, version, sequence, deleted, size_bytes,
                    datastore_key, class_name, object_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(
                arguments: StatementArguments(
                    arguments + [datastore.key.databaseValue, snapshot.className.databaseValue, snapshot.objectId.databaseValue]))
            key = db.lastInsertedRowID
        }
        let previous = existing.flatMap { $0.object.isDeleted ? nil : $0.object.snapshot }
        try writeIndexRows(
            db, objectKey: key, snapshot: deleted ? nil : snapshot, previous: previous, datastoreKey: datastore.key)
        // A tombstone keeps the readers of the last version: they are who is told of the delete.
        let readers: Set<String> =
            deleted ? (existing?.object.readers ?? []) : StoredObject.readers(of: snapshot.acl)
        try updateReaders(db, objectKey: key, from: existing?.object.readers ?? [], to: readers, sequence: sequence)
        var logged = operation
        if existing == nil, case .update = operation.change {
            // The object's first creation: nothing merges over it (no base version precedes it),
            // and whose incarnation it began is told by its origin; its prior values name the
            // fields it created. Its updates and ACL, the whole record again, are not kept.
            logged.change = .update([])
        }
        try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO object_operations (object_key, version, operation, sequence) VALUES (?, ?, ?, ?)"
        ).execute(arguments: [key, operation.version, try logged.encodedDocument(), sequence])

        let wasLive = existing.map { !$0.object.isDeleted } ?? false
        let previousSize = wasLive ? (existing.map { SizeAccounting.recordSize($0.object.snapshot) } ?? 0) : 0
        let countDelta = (deleted ? 0 : 1) - (wasLive ? 1 : 0)
        try db.cachedStatement(
            sql: "UPDATE datastores SET sequence = ?, record_count = record_count + ?, size_bytes = size_bytes + ? WHERE key = ?"
        ).execute(arguments: [sequence, countDelta, size - previousSize, datastore.key])
        return (key, StoredObject(snapshot: snapshot, isDeleted: deleted, sequence: sequence, readers: readers))
    }

    /// The indexed values of an object: its fields and the built-in ones.
    private static func indexedValues(_ snapshot: ObjectSnapshot) -> [String: Value] {
        var indexed = snapshot.fields
        indexed["objectId"] = .string(snapshot.objectId)
        if let createdAt = snapshot.createdAt { indexed["createdAt"] = .date(createdAt) }
        if let updatedAt = snapshot.updatedAt { indexed["updatedAt"] = .date(updatedAt) }
        return indexed
    }

    /// Brings the index rows from `previous` (the live version stored, if any) to `snapshot`
    /// (`nil`: a tombstone, no rows). Only the fields whose value changed are rewritten, so that a
    /// small change to an object with large lists stays cheap.
    ///
    /// A value whose key is longer than ``Value/indexedKeyLimit`` gets a row without a key (its
    /// kind still answers `exists`), a list element or relation member that long gets no row, and
    /// either counts the object in `unindexed_fields` for the field, which tells queries on that
    /// field to let the shared evaluator decide (``SQLQueryCompiler/evaluation(of:unindexed:)``).
    private static func writeIndexRows(
        _ db: Database, objectKey: Int64, snapshot: ObjectSnapshot?, previous: ObjectSnapshot?, datastoreKey: Int64
    ) throws {
        let new = snapshot.map(indexedValues) ?? [:]
        let old = previous.map(indexedValues) ?? [:]
        let className = snapshot?.className ?? previous?.className ?? ""
        let fieldStatement = try db.cachedStatement(
            sql: """
                INSERT INTO object_fields (object_key, field, kind, sort_key, latitude, longitude)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
        let elementStatement = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO object_elements (object_key, field, element_key) VALUES (?, ?, ?)")
        let deleteField = try db.cachedStatement(sql: "DELETE FROM object_fields WHERE object_key = ? AND field = ?")
        let deleteElements = try db.cachedStatement(
            sql: "DELETE FROM object_elements WHERE object_key = ? AND field = ?")
        var unindexed: [String: Int] = [:]
        for (field, value) in old where new[field] != value {
            try deleteField.execute(arguments: [objectKey, field])
            if value.kind == .list || value.kind == .relation { try deleteElements.execute(arguments: [objectKey, field]) }
            if !IndexedValue(value).isComplete { unindexed[field, default: 0] -= 1 }
        }
        for (field, value) in new where old[field] != value {
            let indexed = IndexedValue(value)
            let point = value.geoPointValue
            try fieldStatement.execute(arguments: [
                objectKey, field, value.kind.rawValue, indexed.key.map { Data($0) }, point?.latitude, point?.longitude,
            ])
            for element in indexed.elements {
                try elementStatement.execute(arguments: [objectKey, field, Data(element)])
            }
            if !indexed.isComplete { unindexed[field, default: 0] += 1 }
        }
        for (field, delta) in unindexed where delta != 0 {
            try db.cachedStatement(
                sql: """
                    INSERT INTO unindexed_fields (datastore_key, class_name, field, objects) VALUES (?, ?, ?, ?)
                    ON CONFLICT (datastore_key, class_name, field) DO UPDATE SET objects = objects + excluded.objects
                    """
            ).execute(arguments: [datastoreKey, className, field, delta])
        }
    }

    private static func updateReaders(
        _ db: Database, objectKey: Int64, from old: Set<String>, to new: Set<String>, sequence: Int64
    ) throws {
        for principal in old.subtracting(new) {
            try db.cachedStatement(
                sql: "UPDATE object_readers SET to_sequence = ? WHERE object_key = ? AND principal = ? AND to_sequence IS NULL"
            ).execute(arguments: [sequence, objectKey, principal])
        }
        for principal in new.subtracting(old) {
            try db.cachedStatement(
                sql: "INSERT INTO object_readers (object_key, principal, from_sequence) VALUES (?, ?, ?)"
            ).execute(arguments: [objectKey, principal, sequence])
        }
    }
}
