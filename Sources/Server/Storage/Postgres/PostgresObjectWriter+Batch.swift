import PostgresNIO
import RooftopSQL
import RooftopShared

extension PostgresObjectWriter {
    /// A push as a batch: what its mutations read, read ahead once their locks are held (one
    /// statement per table, ``readAhead(_:)``), and what they write, kept in memory and written
    /// in one statement per kind of row (``flush()``), at the transaction's end or before a read
    /// that must see it. Round trips are what a write costs on PostgreSQL: a push of 500 new
    /// objects makes about ten, not seven per mutation.
    ///
    /// What was read ahead stays true until the transaction writes it: the objects' locks are
    /// held (no other transaction writes them, nor records their mutations' results), and the
    /// datastores' counters are checked again at the end (``settle()``). A write's rows stay in
    /// memory until they are flushed, so a mutation that fails is taken back by dropping them,
    /// without a savepoint (a reader set it made stays, named by nothing: the history sweep
    /// deletes it).
    final class Batch {
        /// One write's plan, with its reader set.
        struct Store {
            var plan: ObjectStorePlan
            /// The reader set's ID (``PostgresStatements/ReaderSet``), `nil` when it has none.
            var readers: Int64?
            /// The key of a new object until it is inserted: `-1`, `-2`, … (``ObjectWriteBackend/store(_:)``
            /// answers it, and the results that name it are rewritten with the real one).
            var placeholder: Int64?
        }

        /// A mutation result's identity.
        struct ResultKey: Hashable {
            var scope: String
            var mutationId: String
        }

        /// An object's operations after a version, oldest first.
        struct ReadOperations {
            var after: Int64
            var records: [OperationRecord]
        }

        /// A result read ahead, with the key of the object it left.
        struct ReadResult {
            var result: MutationResult
            var objectKey: Int64?
        }

        /// Objects read ahead, by lock name (``Locks/objectName(_:)``): `.some(nil)` when none is stored.
        var objects: [String: (key: Int64, object: StoredObject)?] = [:]
        /// Results read ahead: `.some(nil)` when none is recorded.
        var results: [ResultKey: ReadResult?] = [:]
        /// The operations read ahead of objects mutations were based on an older version of, by
        /// object key: after the oldest base the push gives the object (the merges' concurrent
        /// changes; a later base's are their tail).
        var operations: [Int64: ReadOperations] = [:]
        /// Datastores read once their locks were held, without this transaction's additions.
        var datastores: [Int64: DatastoreRecord] = [:]
        /// The row-keeping states of the classes written (``RowFields``), read once their locks
        /// were held.
        var rowStates: [String: RowFields] = [:]
        /// Objects (by lock name and, once stored, by key) and results this transaction wrote:
        /// what was read ahead of them is stale, and they are read again after a flush.
        var writtenNames: Set<String> = []
        var writtenKeys: Set<Int64> = []
        var writtenResults: Set<ResultKey> = []
        /// Writes not flushed yet, in order.
        var stores: [Store] = []
        var resultRows: [MutationResultRow] = []
        /// Keys of stored objects with writes not flushed yet.
        var unflushedKeys: Set<Int64> = []
        private var lastPlaceholder: Int64 = 0
        /// Rows kept before the ones in memory: already written by a flush.
        private var flushed: (stores: Int, results: Int) = (0, 0)

        /// A new object's placeholder key.
        func placeholder() -> Int64 {
            lastPlaceholder -= 1
            return lastPlaceholder
        }

        /// How many rows have been kept so far (written or in memory), to take a failed write's
        /// rows back (``rollBack(to:)``).
        var mark: (stores: Int, results: Int) { (flushed.stores + stores.count, flushed.results + resultRows.count) }

        /// Drops the rows kept since `mark` that are not written yet. (A write's rows follow its
        /// reads, and only a read flushes: none of a failed write's rows were written.)
        func rollBack(to mark: (stores: Int, results: Int)) {
            stores.removeSubrange(max(mark.stores - flushed.stores, 0)...)
            resultRows.removeSubrange(max(mark.results - flushed.results, 0)...)
        }

        /// Takes the rows in memory, to be written.
        func take() -> (stores: [Store], results: [MutationResultRow]) {
            defer {
                flushed = (flushed.stores + stores.count, flushed.results + resultRows.count)
                stores = []
                resultRows = []
                unflushedKeys = []
            }
            return (stores, resultRows)
        }
    }

    /// Reads ahead what the mutations of `requests` will read, once their locks are held: their
    /// datastores, objects, recorded results and, for those based on an older version than the
    /// one stored, the operations since (what the merge reads), one statement each.
    /// - Throws: What the database answers; what decoding a row throws.
    func readAhead(_ requests: [ObjectWriteRequest]) throws {
        for key in Set(requests.map(\.datastoreKey)).sorted() where batch.datastores[key] == nil {
            if let record = try readDatastore(key) { batch.datastores[key] = record }
        }
        // Objects not found are known absent, in the datastores found.
        for request in requests where batch.datastores[request.datastoreKey] != nil {
            let name = Locks.objectName(request)
            if batch.objects[name] == nil { batch.objects[name] = .some(nil) }
        }
        var sets = FeedReaders()
        for row in try session.run(
            PostgresStatements.ObjectsByName(
                datastoreKeys: requests.map(\.datastoreKey), classNames: requests.map(\.className),
                objectIds: requests.map(\.objectId)))
        {
            let found = try PostgresStorage.storedObject(row, from: 1, sets: &sets)
            let datastoreKey = try Array(row)[0].decode(Int64.self)
            let snapshot = found.object.snapshot
            let name = Locks.objectName(
                datastoreKey: datastoreKey, className: snapshot.className, objectId: snapshot.objectId)
            batch.objects[name] = found
        }
        try readOperationsAhead(requests)
        var byScope: [String: [String]] = [:]
        for case let (scope, id)? in requests.map(\.mutation) { byScope[scope, default: []].append(id.rawValue) }
        for (scope, ids) in byScope {
            for id in ids { batch.results[Batch.ResultKey(scope: scope, mutationId: id)] = .some(nil) }
            for row in try session.run(PostgresStatements.RecordedResults(scope: scope, mutationIds: ids)) {
                let (id, result) = try Self.result(row)
                let objectKey = try Array(row)[3].decode(Int64?.self)
                batch.results[Batch.ResultKey(scope: scope, mutationId: id)] = Batch.ReadResult(
                    result: result, objectKey: objectKey)
            }
        }
    }

    /// Reads the operations the merges of `requests` will read (``ObjectWriteFlow``: an object
    /// stored at a newer version than the mutation's base), in one statement, each object's once
    /// from the oldest base the requests give it: a push of updates made concurrently merged
    /// each with a round trip of its own while its locks were held. No other transaction adds
    /// operations to an object whose lock this one holds; the history sweep may delete old ones
    /// meanwhile, which only leaves a merge the history as it was a moment earlier.
    private func readOperationsAhead(_ requests: [ObjectWriteRequest]) throws {
        var oldest: [Int64: Int64] = [:]
        for request in requests {
            guard let base = request.baseVersion, let found = batch.objects[Locks.objectName(request)] ?? nil,
                base < found.object.snapshot.version
            else { continue }
            oldest[found.key] = min(oldest[found.key] ?? base, base)
        }
        // One pair per object (the statement reads each pair's range once).
        let pairs = oldest.filter { key, base in batch.operations[key].map { $0.after > base } ?? true }
            .sorted { $0.key < $1.key }
        guard !pairs.isEmpty else { return }
        for (key, base) in pairs { batch.operations[key] = Batch.ReadOperations(after: base, records: []) }
        for row in try session.run(
            PostgresStatements.OperationsAfterEach(objectKeys: pairs.map(\.key), versions: pairs.map(\.value)))
        {
            let (key, _, operation) = try row.decode((Int64, Int64, String).self)
            batch.operations[key]?.records.append(try StoredOperation.record(from: operation))
        }
    }

    /// The datastore's row, read once its write's locks are held (locked until commit when the
    /// transaction is alone in it); `nil` when it does not exist.
    func readDatastore(_ key: Int64) throws -> DatastoreRecord? {
        let rows =
            alone
            ? try session.run(PostgresStatements.DatastoreRowAlone(key: key))
            : try session.run(PostgresStatements.DatastoreRow(key: key))
        return try rows.first.map(PostgresStorage.datastore)
    }

    /// Writes the kept rows: the index rows of changed fields are deleted, the new objects
    /// inserted (answering their keys), then one statement writes the existing objects' rows and
    /// every other row of the batch.
    /// - Throws: ``BatchFault`` when a row did not land (the push is retried); what the database
    ///   answers. Never a ``RooftopError``: a push
    ///   records those as one mutation's refusal and goes on.
    func flush() throws {
        guard !batch.stores.isEmpty || !batch.resultRows.isEmpty else { return }
        let (stores, results) = batch.take()

        var removedElements: [(key: Int64, field: String)] = []
        var removedFields: [(key: Int64, field: String)] = []
        for store in stores {
            guard let key = store.plan.existingKey else { continue }
            for removed in store.plan.removedFields {
                removedFields.append((key, removed.field))
                if removed.elements { removedElements.append((key, removed.field)) }
            }
        }
        if !removedFields.isEmpty {
            _ = try session.run(PostgresStatements.RemoveFieldsBatch(elements: removedElements, fields: removedFields))
        }

        var keys: [Int64: Int64] = [:]
        let new = stores.filter { $0.plan.existingKey == nil }
        if !new.isEmpty {
            var placeholders: [String: Int64] = [:]
            for store in new {
                guard let placeholder = store.placeholder else { continue }
                placeholders[Locks.objectName(store.plan)] = placeholder
            }
            for row in try session.run(PostgresStatements.InsertObjects(stores: new)) {
                let (key, datastoreKey, className, objectId) = try row.decode((Int64, Int64, String, String).self)
                let name = Locks.objectName(datastoreKey: datastoreKey, className: className, objectId: objectId)
                guard let placeholder = placeholders[name] else { continue }
                keys[placeholder] = key
                batch.writtenKeys.insert(key)
            }
        }
        // A missing key is a ``BatchFault``, not a ``RooftopError``: a push records those as its
        // mutation's refusal and goes on, and the batch's rows are gone from memory.
        let keyed = try stores.map { store in
            guard let key = store.plan.existingKey ?? store.placeholder.flatMap({ keys[$0] }) else {
                throw BatchFault(message: "a new object's key is missing")
            }
            return (key: key, store: store)
        }
        var rows = results
        for index in rows.indices {
            if let placeholder = rows[index].objectKey, placeholder < 0 { rows[index].objectKey = keys[placeholder] }
        }
        let updated = try session.run(PostgresStatements.StoreRows(stores: keyed, results: rows)).first?
            .decode(Int64.self) ?? 0
        let existing = stores.count - new.count
        guard updated == existing else {
            throw BatchFault(message: "\(existing - Int(updated)) objects' rows were deleted during the write")
        }
    }

    /// A batch whose rows did not all land (an object this transaction read ahead was deleted
    /// meanwhile, which the history sweep, taking the datastore's lock exclusively, should never
    /// do). A storage fault (503 `retryLater`: the push is retried), never a ``RooftopError``,
    /// which a push would record as one mutation's refusal while the transaction goes on.
    struct BatchFault: StorageFaultReporting {
        var message: String
        var storageFault: String? { message }
    }
}

extension PostgresObjectWriter.Locks {
    /// An object's lock name (see ``objectName(_:)``).
    static func objectName(datastoreKey: Int64, className: String, objectId: String) -> String {
        "\(datastoreKey) \(className.utf8.count) \(className) \(objectId)"
    }

    /// The lock name of the object a plan writes.
    static func objectName(_ plan: ObjectStorePlan) -> String {
        objectName(datastoreKey: plan.datastoreKey, className: plan.className, objectId: plan.objectId)
    }
}
