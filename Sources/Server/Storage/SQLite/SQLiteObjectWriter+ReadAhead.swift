import GRDB
import RooftopShared

extension SQLiteObjectWriter {
    /// What a push's writes need to know before they run, read in a few statements for all of
    /// them (``ObjectWriter/lock(_:)``): which mutation IDs have no recorded result and which
    /// objects are not stored, so that a push of new objects does not look each one up twice
    /// (its result in two tables, then the object); and each datastore written, read once per
    /// transaction and kept with the counters its writes leave it.
    ///
    /// Only absences are kept, and a write that records a result or stores an object takes its
    /// name out first, so the sets only shrink: a name in them is absent from the database as
    /// well, whatever savepoints rolled back since. What was found present is read again when
    /// asked, as without read-ahead (the rare case: a retried push).
    final class ReadAhead {
        /// The (scope, mutation ID) pairs without a recorded result.
        private(set) var unrecorded: Set<ResultKey> = []
        /// The (datastore key, class, object ID) triples not stored, tombstones included.
        private(set) var absent: Set<ObjectName> = []
        /// The datastores read in this transaction, with what its writes since added; a write
        /// that fails drops them (its savepoint took its counters back), to be read again.
        private var datastores: [Int64: DatastoreRecord] = [:]
        /// The reader sets' IDs found or made in this transaction (a push's objects share a few);
        /// dropped with the datastores, as a set made by a failed write is gone with it.
        private var readerSets: [Set<String>: Int64] = [:]
        /// The value-index partitions found or made in this transaction
        /// (``SQLiteStorage/partition(datastoreKey:className:_:)``: a push's objects share one or
        /// two); dropped with the datastores, as one made by a failed write is gone with it.
        private var partitions: [ClassName: Int64] = [:]

        struct ResultKey: Hashable {
            var scope: String
            var mutationId: String
        }

        struct ObjectName: Hashable {
            var datastoreKey: Int64
            var className: String
            var objectId: String
        }

        private struct ClassName: Hashable {
            var datastoreKey: Int64
            var className: String
        }

        /// Reads, for `requests`, which of their mutation IDs have no recorded result and which of
        /// their objects are not stored.
        /// - Throws: What the database throws.
        func read(_ requests: [ObjectWriteRequest], _ db: Database) throws {
            var byScope: [String: Set<String>] = [:]
            for case let (scope, id)? in requests.map(\.mutation) { byScope[scope, default: []].insert(id.rawValue) }
            for (scope, ids) in byScope {
                var missing = ids
                let list = SQLiteStorage.jsonList(ids)
                // Results recorded before the compact form (schema v4) are in their old table.
                for table in ["mutation_results", "mutations"] {
                    let statement = try db.cachedStatement(
                        sql: "SELECT mutation_id FROM \(table) WHERE scope = ? AND mutation_id IN (SELECT value FROM json_each(?))")
                    for found in try String.fetchAll(statement, arguments: [scope, list]) { missing.remove(found) }
                }
                for id in missing { unrecorded.insert(ResultKey(scope: scope, mutationId: id)) }
            }
            var byClass: [ClassName: Set<String>] = [:]
            for request in requests {
                byClass[ClassName(datastoreKey: request.datastoreKey, className: request.className), default: []]
                    .insert(request.objectId)
            }
            let storedIDs = try db.cachedStatement(
                sql: """
                    SELECT object_id FROM objects
                    WHERE datastore_key = ? AND class_name = ? AND object_id IN (SELECT value FROM json_each(?))
                    """)
            for (group, ids) in byClass {
                var missing = ids
                let found = try String.fetchAll(
                    storedIDs, arguments: [group.datastoreKey, group.className, SQLiteStorage.jsonList(ids)])
                for id in found { missing.remove(id) }
                for id in missing {
                    absent.insert(ObjectName(datastoreKey: group.datastoreKey, className: group.className, objectId: id))
                }
            }
        }

        /// Whether the mutation is known to have no recorded result.
        func isUnrecorded(scope: String, id: MutationID) -> Bool {
            unrecorded.contains(ResultKey(scope: scope, mutationId: id.rawValue))
        }

        /// Takes a mutation ID out, before its result is recorded.
        func recording(scope: String, id: String) {
            unrecorded.remove(ResultKey(scope: scope, mutationId: id))
        }

        /// Whether the object is known not to be stored.
        func isAbsent(datastoreKey: Int64, className: String, objectId: String) -> Bool {
            absent.contains(ObjectName(datastoreKey: datastoreKey, className: className, objectId: objectId))
        }

        /// Takes an object out, before it is stored.
        func storing(datastoreKey: Int64, className: String, objectId: String) {
            absent.remove(ObjectName(datastoreKey: datastoreKey, className: className, objectId: objectId))
        }

        /// The datastore as this transaction left it, read by `read` the first time.
        func datastore(_ key: Int64, read: () throws -> DatastoreRecord?) rethrows -> DatastoreRecord? {
            if let known = datastores[key] { return known }
            let record = try read()
            datastores[key] = record
            return record
        }

        /// Adds a stored change to its datastore's kept counters, as the `UPDATE` of its row did.
        func stored(datastoreKey: Int64, sequence: Int64, countDelta: Int64, sizeDelta: Int64) {
            guard var record = datastores[datastoreKey] else { return }
            let (count, countOverflow) = record.recordCount.addingReportingOverflow(Int(truncatingIfNeeded: countDelta))
            let (size, sizeOverflow) = record.sizeBytes.addingReportingOverflow(Int(truncatingIfNeeded: sizeDelta))
            guard !countOverflow, !sizeOverflow else {
                datastores[datastoreKey] = nil
                return
            }
            record.sequence = sequence
            record.recordCount = count
            record.sizeBytes = size
            datastores[datastoreKey] = record
        }

        /// The ID of the reader set `readers`, found or made by `find` the first time.
        func readerSet(_ readers: Set<String>, find: () throws -> Int64) rethrows -> Int64 {
            if let known = readerSets[readers] { return known }
            let id = try find()
            readerSets[readers] = id
            return id
        }

        /// The value-index partition of `className` in `datastoreKey`, found or made by `find` the
        /// first time in the transaction.
        func partition(datastoreKey: Int64, className: String, find: () throws -> Int64) rethrows -> Int64 {
            let name = ClassName(datastoreKey: datastoreKey, className: className)
            if let known = partitions[name] { return known }
            let key = try find()
            partitions[name] = key
            return key
        }

        /// Drops the kept datastores, reader sets and partitions: a write's savepoint rolled back,
        /// and with it its counters and the sets and partitions it made.
        func rolledBack() {
            datastores.removeAll()
            readerSets.removeAll()
            partitions.removeAll()
        }
    }
}
