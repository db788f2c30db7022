import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared

/// Writes the entries of the declared indexes (``SQLCompoundIndex``) of the objects one write
/// transaction stores (with the element entries of an index led by a list,
/// ``SQLCompoundIndex/elementEntries``), and their counts per first key (`index_key_counts`).
///
/// An entry's keys are the object's field rows' keys, which the writer already holds
/// (``SQLIndexRows``): they are bound directly, not read back from `object_fields` by a
/// statement per index. The partitions of a class in a datastore are read once per transaction.
///
/// Counts: an entry of an index that keeps counts (``SQLCompoundIndex/keepsKeyCounts``) adds one
/// to its key's row. With ``defersCounts`` (an initial sync's page: hundreds of objects sharing
/// a few keys) the additions are summed per key and written once, by ``flushCounts(_:)``, which
/// must run before anything reads, moves or takes away entries written since
/// (``StoreTransaction`` flushes before storing an object that may have entries, before a
/// removal and at the end of every write). Taking entries away is a trigger's work
/// (`index_key_counts_delete`), as is a readable flag's flip.
final class IndexEntryWriter {
    /// Count additions not written yet, per partition and first key.
    private var pending: [CountKey: (live: Int64, readable: Int64)] = [:]
    /// The partitions of the classes written, per datastore and class, once read.
    private var partitionsRead: [ClassKey: [SQLCompoundIndex]] = [:]
    /// Sums count additions until ``flushCounts(_:)`` instead of writing each.
    var defersCounts = false

    private struct CountKey: Hashable {
        var partition: Int64
        var key: [UInt8]
    }

    /// Where each scope's datastore's bulk load stands, once read (`nil`: none under way).
    private var bulkBoundsRead: [BulkKey: Int64?] = [:]

    private struct BulkKey: Hashable {
        var scope: String
        var datastore: DatastoreID
    }

    private struct ClassKey: Hashable {
        var datastore: DatastoreID
        var className: String
    }

    /// Writes the entries of the object with row key `objectKey` (`key`, in `scope`) whose field
    /// rows are `rows` (all of them, ``SQLIndexRows/diff(snapshot:previous:)`` from no previous
    /// state), flagged `readable`. Its class's partitions in the datastore must exist (the
    /// object's row is written first, and its class's count row with it, whose trigger makes them).
    /// - Throws: GRDB's errors.
    func insert(
        objectKey: Int64, key: ObjectKey, scope: String, rows: [SQLIndexRows.FieldRow], readable: Bool, _ db: Database
    ) throws {
        // Not built yet in a bulk load: its pass makes them (``LocalStore/BulkLoading``).
        if let bound = try bulkBound(scope: scope, datastore: key.datastore, db), objectKey >= bound { return }
        let indexes = try partitions(scope: scope, datastore: key.datastore, className: key.className, db)
        guard !indexes.isEmpty else { return }
        var keys: [String: [UInt8]] = [:]
        for row in rows { keys[row.field] = row.sortKey ?? [] }
        let entry = DirectStatement(
            try db.cachedStatement(
                sql: "INSERT INTO index_entries (partition, k1, k2, k3, k4, object_key, readable) VALUES (?, ?, ?, ?, ?, ?, ?)"))
        for index in indexes {
            // A field the object lacks, or one the index does not have: the empty key.
            let entryKeys = (0..<ClassSettings.maxIndexFields).map { position in
                position < index.fields.count ? keys[index.fields[position]] ?? [] : []
            }
            try entry.execute { values in
                values.bind(index.partition)
                for entryKey in entryKeys { values.bind(entryKey) }
                values.bind(objectKey)
                values.bind(readable)
            }
            // A list (or relation) first: an entry per element too (the row's elements are distinct).
            for element in rows.first(where: { $0.field == index.fields[0] })?.elements ?? [] {
                try entry.execute { values in
                    values.bind(SQLCompoundIndex.elementPartition(of: index.partition))
                    values.bind(element)
                    for entryKey in entryKeys.dropFirst() { values.bind(entryKey) }
                    values.bind(objectKey)
                    values.bind(readable)
                }
            }
            guard index.keepsKeyCounts else { continue }
            let count = CountKey(partition: index.partition, key: entryKeys[0])
            if defersCounts {
                pending[count, default: (0, 0)].live += 1
                pending[count, default: (0, 0)].readable += readable ? 1 : 0
            } else {
                try add(count, live: 1, readable: readable ? 1 : 0, db)
            }
        }
    }

    /// Writes the count additions summed so far.
    /// - Throws: GRDB's errors.
    func flushCounts(_ db: Database) throws {
        guard !pending.isEmpty else { return }
        for (count, added) in pending { try add(count, live: added.live, readable: added.readable, db) }
        pending = [:]
    }

    /// Forgets the partitions read (the declarations changed).
    func forgetPartitions() {
        partitionsRead = [:]
    }

    /// Forgets where bulk loads stood (a pass moved one).
    func forgetBulkBounds() {
        bulkBoundsRead = [:]
    }

    /// Where a bulk load of a scope's datastore stands (``LocalStore/bulkBound(scope:datastore:_:)``),
    /// read once per transaction.
    private func bulkBound(scope: String, datastore: DatastoreID, _ db: Database) throws -> Int64? {
        let key = BulkKey(scope: scope, datastore: datastore)
        if let known = bulkBoundsRead[key] { return known }
        let bound = try LocalStore.bulkBound(scope: scope, datastore: datastore, db)
        bulkBoundsRead[key] = .some(bound)
        return bound
    }

    private func add(_ count: CountKey, live: Int64, readable: Int64, _ db: Database) throws {
        try DirectStatement(
            db.cachedStatement(
                sql: """
                    INSERT INTO index_key_counts (partition, k1, live, readable) VALUES (?, ?, ?, ?)
                    ON CONFLICT (partition, k1) DO UPDATE SET live = live + excluded.live, readable = readable + excluded.readable
                    """)
        ).execute { values in
            values.bind(count.partition)
            values.bind(count.key)
            values.bind(live)
            values.bind(readable)
        }
    }

    private func partitions(scope: String, datastore: DatastoreID, className: String, _ db: Database) throws
        -> [SQLCompoundIndex]
    {
        let key = ClassKey(datastore: datastore, className: className)
        if let known = partitionsRead[key] { return known }
        let read = try LocalStore.compoundIndexes(scope: scope, datastore: datastore, className: className, db)
        partitionsRead[key] = read
        return read
    }
}
