import PostgresNIO
import RooftopShared

extension PostgresObjectWriter {
    /// What a transaction's writes add to their datastores, kept until its end writes it: the
    /// live record count and size, the counts of unindexed fields and the objects written; and
    /// where its changes are numbered.
    final class Pending {
        struct Datastore {
            var records: Int64 = 0
            var bytes: Int64 = 0
            var unindexed: [Unindexed: Int64] = [:]
            /// The objects written.
            var writes = 0
            /// The tightest limits a write to it was decided under.
            var limits: (records: Int, bytes: Int)?
        }

        struct Unindexed: Hashable {
            var className: String
            var field: String
        }

        /// The store of the write in progress, counted once its flow has ended.
        struct Staged {
            var datastoreKey: Int64
            var plan: ObjectStorePlan
        }

        private(set) var datastores: [Int64: Datastore] = [:]
        /// The first sequence of the transaction's range (``PostgresStatements/FeedBase``), read
        /// with its first locks.
        var feedBase: Int64?
        /// The changes numbered so far.
        private var feedChanges: Int64 = 0
        var staged: Staged?
        /// The objects whose locks the transaction holds (taken by ``lock(_:)`` or by a write), by
        /// lock name.
        var locked: Set<String> = []
        /// Reader sets known in the transaction, by text: found committed, or made by it.
        var readerSets: [String: Int64] = [:]
        /// Sets found that a sweep has marked unnamed, by text: named by this transaction's
        /// writes (its lock keeps them until it ends), never cached by the process.
        var markedReaderSets: [String: Int64] = [:]

        /// Notes the limits a write to the datastore is decided under.
        func limit(_ datastoreKey: Int64, by limits: (records: Int, bytes: Int)?) {
            guard let limits else { return }
            let current = datastores[datastoreKey, default: Datastore()].limits
            datastores[datastoreKey, default: Datastore()].limits = (
                min(current?.records ?? limits.records, limits.records), min(current?.bytes ?? limits.bytes, limits.bytes)
            )
        }

        /// The datastore as read, with this transaction's additions so far.
        func adding(to record: DatastoreRecord) -> DatastoreRecord {
            guard let pending = datastores[record.key] else { return record }
            var record = record
            record.recordCount += Int(pending.records)
            record.sizeBytes += Int(pending.bytes)
            return record
        }

        /// The transaction's next sequence: its range's base, plus the changes numbered before.
        /// - Throws: ``FeedContention`` before the transaction's locks (which read the base);
        ///   ``BatchFault`` past ``PostgresStatements/changesPerTransaction`` changes.
        func nextSequence() throws -> Int64 {
            guard let feedBase else { throw FeedContention(message: "a change was numbered before its locks") }
            guard feedChanges < PostgresStatements.changesPerTransaction else {
                throw BatchFault(message: "a transaction may make at most \(PostgresStatements.changesPerTransaction) changes")
            }
            let (sequence, overflow) = feedBase.addingReportingOverflow(feedChanges)
            guard !overflow else { throw BatchFault(message: "the change feed's numbers are spent") }
            feedChanges += 1
            return sequence
        }

        func stage(_ plan: ObjectStorePlan) {
            staged = Staged(datastoreKey: plan.datastoreKey, plan: plan)
        }

        /// Forgets what the write in progress staged (it failed, or it starts).
        func dropStaged() {
            staged = nil
        }

        /// Adds the staged store (a write whose flow ended) to its datastore's.
        func commitStaged() {
            guard let staged else { return }
            self.staged = nil
            var pending = datastores[staged.datastoreKey, default: Datastore()]
            pending.records += staged.plan.countDelta
            pending.bytes += staged.plan.sizeDelta
            for (field, delta) in staged.plan.unindexed {
                pending.unindexed[Unindexed(className: staged.plan.className, field: field), default: 0] += delta
            }
            pending.writes += 1
            datastores[staged.datastoreKey] = pending
        }
    }

    /// The advisory locks of a set of writes (``PostgresStatements/LockWrites``): their datastores'
    /// keys, and their objects' names, hashed with a seed kept in the database (a caller who
    /// names objects cannot aim a name at another object's lock key without it).
    struct Locks {
        var datastores: [Int64]
        var objects: [String]
        /// The classes written, whose locks are shared (a rebuild of their rows excludes
        /// writers, ``RowFields``).
        var classes: [String]
        var seed: Int64

        init(_ requests: [ObjectWriteRequest], seed: Int64) {
            self.init(
                datastores: Array(Set(requests.map(\.datastoreKey))), objects: Array(Set(requests.map(Self.objectName))),
                classes: Array(Set(requests.map(\.className))), seed: seed)
        }

        init(datastores: [Int64], objects: [String], classes: [String] = [], seed: Int64) {
            (self.datastores, self.objects, self.classes, self.seed) = (datastores, objects, classes, seed)
        }

        /// An object's lock name: lengths first, so that no two objects have the same one.
        static func objectName(_ request: ObjectWriteRequest) -> String {
            objectName(datastoreKey: request.datastoreKey, className: request.className, objectId: request.objectId)
        }

        var bindings: PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(datastores)
            bindings.append(objects)
            bindings.append(seed)
            bindings.append(classes)
            return bindings
        }
    }

    /// A concurrent transaction took the room under a datastore's limits that this one's
    /// decisions counted on: it is rolled back and runs again alone
    /// (``PostgresStorage/writeObjects(_:)``).
    struct LimitContention: Error {}

    /// The transaction cannot number a change after the object's last one: a transaction
    /// numbered after it wrote the object and committed between this one's first change and
    /// its lock on the object (a lock taken after the transaction's first change). It is rolled
    /// back and runs again (``PostgresStorage/writeObjects(_:)``), numbered after what committed;
    /// when that keeps happening, a storage fault (503 `retryLater`). Never a ``RooftopError``,
    /// which a push would record as one mutation's refusal.
    struct FeedContention: StorageFaultReporting {
        var message: String
        var storageFault: String? { message }
    }

    /// Ends the transaction's writes: writes the batch's rows kept in memory, then, for each
    /// datastore written (in key order, as every transaction takes their locks), adds the
    /// counters, which takes the datastore's row lock until commit. The changes were numbered as
    /// they were made (``PostgresStatements/FeedBase``), so the writers of a datastore wait for
    /// each other only from the counters to commit.
    /// - Throws: ``LimitContention`` when a datastore's counts are over the limits its writes were
    ///   decided under and this transaction grew it (not when `alone`: its counts were exact);
    ///   `notFound` when a datastore is gone; what the database answers.
    func settle() throws {
        try flush()
        for (key, pending) in pending.datastores.sorted(by: { $0.key < $1.key }) where pending.writes > 0 {
            let unindexed = pending.unindexed.filter { $0.value != 0 }
            if pending.records == 0, pending.bytes == 0, unindexed.isEmpty { continue }
            guard
                let row = try session.run(
                    PostgresStatements.Settle(
                        datastoreKey: key, records: pending.records, bytes: pending.bytes,
                        unindexedClasses: unindexed.keys.map(\.className), unindexedFields: unindexed.keys.map(\.field),
                        unindexedDeltas: Array(unindexed.values))
                ).first
            else { throw RooftopError(.notFound, "the datastore no longer exists") }
            let (records, bytes) = try row.decode((Int64, Int64).self)
            if !alone, let limits = pending.limits,
                pending.records > 0 && records > Int64(limits.records) || pending.bytes > 0 && bytes > Int64(limits.bytes)
            {
                throw LimitContention()
            }
        }
    }
}

extension PostgresStatements {
    /// A transaction's end in one datastore (``PostgresObjectWriter/settle()``): the counters
    /// (taking the row lock until commit) and the unindexed counts. Answers the counters after.
    struct Settle: PostgresRowStatement {
        static let sql = """
            WITH d AS (UPDATE datastores SET record_count = record_count + $2::bigint,
            size_bytes = size_bytes + $3::bigint WHERE key = $1::bigint RETURNING record_count, size_bytes),
            x AS (INSERT INTO unindexed_fields (datastore_key, class_name, field, objects)
            SELECT $1::bigint, u.class_name, u.field, u.objects
            FROM d, unnest($4::text[], $5::text[], $6::bigint[]) AS u(class_name, field, objects)
            ON CONFLICT (datastore_key, class_name, field) DO UPDATE SET objects = unindexed_fields.objects + excluded.objects)
            SELECT record_count, size_bytes FROM d
            """
        var datastoreKey: Int64
        var records: Int64
        var bytes: Int64
        var unindexedClasses: [String]
        var unindexedFields: [String]
        var unindexedDeltas: [Int64]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(datastoreKey)
            bindings.append(records)
            bindings.append(bytes)
            bindings.append(unindexedClasses)
            bindings.append(unindexedFields)
            bindings.append(unindexedDeltas)
            return bindings
        }
    }
}
