import PostgresNIO
import RooftopShared

extension PostgresObjectWriter {
    /// What a transaction's writes add to their datastores, kept until its end writes it: the
    /// number of changes (each numbered provisionally), the live record count and size, the
    /// counts of unindexed fields and the objects written.
    final class Pending {
        struct Datastore {
            /// Provisional sequences handed out: `-1` … `-changes`.
            var changes: Int64 = 0
            var records: Int64 = 0
            var bytes: Int64 = 0
            var unindexed: [Unindexed: Int64] = [:]
            /// The objects written.
            var writes = 0
            /// The keys of objects whose rows were written before the transaction's end, with
            /// provisional sequences that ``settle()`` renumbers (a flush before a read).
            var provisionalKeys: Set<Int64> = []
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

        /// The datastore's next provisional sequence (see ``FeedNumbering``).
        func provisionalSequence(datastoreKey: Int64) -> Int64 {
            datastores[datastoreKey, default: Datastore()].changes += 1
            return -datastores[datastoreKey, default: Datastore()].changes
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

        /// Notes an object's rows written with a provisional sequence.
        func writtenProvisionally(datastoreKey: Int64, objectKey: Int64) {
            datastores[datastoreKey, default: Datastore()].provisionalKeys.insert(objectKey)
        }
    }

    /// The advisory locks of a set of writes (``PostgresStatements/LockWrites``): their datastores'
    /// keys, and their objects' names, hashed with a seed kept in the database (a caller who
    /// names objects cannot aim a name at another object's lock key without it).
    struct Locks {
        var datastores: [Int64]
        var objects: [String]
        var seed: Int64

        init(_ requests: [ObjectWriteRequest], seed: Int64) {
            self.init(
                datastores: Array(Set(requests.map(\.datastoreKey))), objects: Array(Set(requests.map(Self.objectName))),
                seed: seed)
        }

        init(datastores: [Int64], objects: [String], seed: Int64) {
            (self.datastores, self.objects, self.seed) = (datastores, objects, seed)
        }

        /// An object's lock name: lengths first, so that no two objects have the same one.
        static func objectName(_ request: ObjectWriteRequest) -> String {
            objectName(datastoreKey: request.datastoreKey, className: request.className, objectId: request.objectId)
        }

        var bindings: PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(datastores)
            bindings.append(objects)
            bindings.append(seed)
            return bindings
        }
    }

    /// A concurrent transaction took the room under a datastore's limits that this one's
    /// decisions counted on: it is rolled back and runs again alone
    /// (``PostgresStorage/writeObjects(_:)``).
    struct LimitContention: Error {}

    /// Ends the transaction's writes: for each datastore written (in key order, as every
    /// transaction takes their locks), takes its row lock, held until commit, numbers the
    /// changes after its sequence (renumbering the rows a flush before a read wrote), and adds
    /// the counters; then writes the batch's rows kept in memory, with their settled sequences. Changes therefore commit in sequence
    /// order, and a pull that read up to a sequence never misses one committed later, while the
    /// datastore's writers waited for each other only from here to commit.
    /// - Throws: ``LimitContention`` when a datastore's counts are over the limits its writes were
    ///   decided under and this transaction grew it (not when `alone`: its counts were exact);
    ///   `notFound` when a datastore is gone; what the database answers.
    func settle() throws {
        for (key, pending) in pending.datastores.sorted(by: { $0.key < $1.key }) where pending.writes > 0 {
            let unindexed = pending.unindexed.filter { $0.value != 0 }
            guard
                let row = try session.run(
                    PostgresStatements.Settle(
                        datastoreKey: key, changes: pending.changes, records: pending.records, bytes: pending.bytes,
                        objectKeys: pending.provisionalKeys.sorted(), unindexedClasses: unindexed.keys.map(\.className),
                        unindexedFields: unindexed.keys.map(\.field), unindexedDeltas: Array(unindexed.values))
                ).first
            else { throw RooftopError(.notFound, "the datastore no longer exists") }
            let (base, records, bytes) = try row.decode((Int64, Int64, Int64).self)
            if !alone, let limits = pending.limits,
                pending.records > 0 && records > Int64(limits.records) || pending.bytes > 0 && bytes > Int64(limits.bytes)
            {
                throw LimitContention()
            }
            numbering?.settle(datastoreKey: key, base: base)
        }
        // The rows still in memory go with their sequences settled: nothing to renumber.
        try flush(settled: true)
    }
}

extension PostgresStatements {
    /// A transaction's end in one datastore (``PostgresObjectWriter/settle()``): the row lock,
    /// the sequences (provisional `-i` becomes `base + i` in the objects, readers' history and
    /// operations written), the counters and the unindexed counts. Answers `base` and the
    /// counters after. Every clause but the first reads its answer, so runs after its lock.
    struct Settle: PostgresRowStatement {
        static let sql = """
            WITH d AS (UPDATE datastores SET sequence = sequence + $2::bigint, record_count = record_count + $3::bigint,
            size_bytes = size_bytes + $4::bigint WHERE key = $1::bigint
            RETURNING sequence - $2::bigint AS base, record_count, size_bytes),
            o AS (UPDATE objects SET sequence = d.base - objects.sequence FROM d
            WHERE objects.key = ANY($5::bigint[]) AND objects.sequence < 0),
            r AS (UPDATE object_readers SET
            from_sequence = CASE WHEN from_sequence < 0 THEN d.base - from_sequence ELSE from_sequence END,
            to_sequence = CASE WHEN to_sequence < 0 THEN d.base - to_sequence ELSE to_sequence END
            FROM d WHERE object_key = ANY($5::bigint[]) AND (from_sequence < 0 OR to_sequence < 0)),
            p AS (UPDATE object_operations SET sequence = d.base - object_operations.sequence FROM d
            WHERE object_key = ANY($5::bigint[]) AND object_operations.sequence < 0),
            x AS (INSERT INTO unindexed_fields (datastore_key, class_name, field, objects)
            SELECT $1::bigint, u.class_name, u.field, u.objects
            FROM d, unnest($6::text[], $7::text[], $8::bigint[]) AS u(class_name, field, objects)
            ON CONFLICT (datastore_key, class_name, field) DO UPDATE SET objects = unindexed_fields.objects + excluded.objects)
            SELECT base, record_count, size_bytes FROM d
            """
        var datastoreKey: Int64
        var changes: Int64
        var records: Int64
        var bytes: Int64
        var objectKeys: [Int64]
        var unindexedClasses: [String]
        var unindexedFields: [String]
        var unindexedDeltas: [Int64]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 8)
            bindings.append(datastoreKey)
            bindings.append(changes)
            bindings.append(records)
            bindings.append(bytes)
            bindings.append(objectKeys)
            bindings.append(unindexedClasses)
            bindings.append(unindexedFields)
            bindings.append(unindexedDeltas)
            return bindings
        }
    }
}
