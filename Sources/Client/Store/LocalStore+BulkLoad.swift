import GRDB
import RooftopSQL
import RooftopShared
import Synchronization

/// An initial sync as a bulk load: the declared indexes' entries of the objects it stores are
/// built in sorted passes, not one object at a time.
///
/// Each object has an entry per declared index (and per element of a list leading one), at a
/// random place in a tree far larger than one transaction touches: written object by object, a
/// pulled batch dirties most of the tree's leaves, and each goes to the log once per transaction
/// (about 25 KB written per object at 100,000 objects, most of an initial sync's time). While a
/// datastore is loaded in bulk (a `bulk_loads` row), its objects from `built_to` on (by row key,
/// which grows as objects are stored) have no entries and no counts per key; every so many
/// (``BulkLoadThresholds/passSize``) a pass builds theirs in one `INSERT … SELECT … ORDER BY` (each leaf
/// written once) and moves `built_to` past them. The load ends with the pull that catches up.
///
/// Every write keeps the rule by the row key it writes: an object below `built_to` gets its
/// entries as always, one from `built_to` on does not (``IndexEntryWriter``,
/// ``StoreTransaction/indexEntries(where:_:counts:bulkLoads:ordered:_:)``). A local query of the datastore
/// runs twice and the pages are merged (``LocalStore/find(_:scope:datastore:pinnedWith:readers:excluding:keepingFlags:)``):
/// below `built_to` as always, and from it on (at most a pass's worth of objects: 10,000, or a
/// quarter of those built) without the declared indexes, reading those objects' documents.
///
/// Only when the app chooses it (``ClientConfiguration/bulkInitialSync``): those queries take
/// tens of milliseconds instead of one or two, and a save waits for a pass (seconds at a million
/// objects), where the sync runs 1.4–1.75 times as fast (docs/benchmarks.md).
extension LocalStore {
    /// When a pull loads a datastore in bulk, and how often a pass builds entries.
    struct BulkLoading: Sendable {
        /// Whether pulls load in bulk at all (``ClientConfiguration/bulkInitialSync``).
        var enabled = false
        /// When a pull loads in bulk, and how often a pass runs
        /// (``ClientConfiguration/bulkLoadThresholds``).
        var thresholds = BulkLoadThresholds()
        /// Loads begun since the store opened (tests read it: ``SyncEngine/bulkLoadsBegun``).
        var begun = 0
    }

    /// Starts a bulk load of `datastore`, a first sync: only when it holds fewer than
    /// ``BulkLoadThresholds/passSize`` live objects (a pull that brings back a datastore already stored
    /// rewrites objects that have their entries, and would gain nothing). Objects stored from now
    /// on get their entries from a pass. Nothing when a load is under way.
    /// - Returns: Whether a load is under way now.
    /// - Throws: `cache` when the store cannot be written.
    @discardableResult
    func beginBulkLoad(scope: String, datastore: DatastoreID) async throws(RooftopError) -> Bool {
        let most = bulkLoading.withLock { $0.thresholds.passSize }
        // Whether one was under way already (`false`), began now (`true`), or none (`nil`).
        let began = try await writeLong(scope: scope, durability: .deferred) { transaction -> Bool? in
            let db = transaction.db
            if try LocalStore.bulkBound(scope: scope, datastore: datastore, db) != nil { return false }
            let live = try LocalStore.liveObjects(scope: scope, datastore: datastore, db)
            guard live < most else { return nil }
            try db.execute(
                sql: "INSERT INTO bulk_loads (scope, datastore, built_to) VALUES (?, ?, ?)",
                arguments: [scope, datastore.rawValue, try LocalStore.nextObjectKey(db)])
            return true
        }
        if began == true { bulkLoading.withLock { $0.begun += 1 } }
        return began != nil
    }

    /// The live objects a scope's datastore holds (its class counts).
    static func liveObjects(scope: String, datastore: DatastoreID, _ db: Database) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(sql: "SELECT coalesce(sum(live), 0) FROM class_counts WHERE scope = ? AND datastore = ?"),
            arguments: [scope, datastore.rawValue]) ?? 0
    }

    /// A row key above every object's (those given from now on are at least this).
    static func nextObjectKey(_ db: Database) throws -> Int64 {
        let last = try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(key), 0) FROM objects")) ?? 0
        let (next, overflow) = last.addingReportingOverflow(1)
        guard !overflow else { throw RooftopError(.cache, "the local datastore's object keys are exhausted") }
        return next
    }

    /// Builds the entries of the objects a bulk load of `datastore` stored since its last pass,
    /// when they are at least ``BulkLoadThresholds/passSize`` and ``BulkLoadThresholds/growth`` of those built
    /// (all of them with `finishing`, which ends the load). Nothing when no load is under way.
    /// - Returns: Whether a pass ran.
    /// - Throws: `cache` when the store cannot be written.
    @discardableResult
    func buildBulkEntries(scope: String, datastore: DatastoreID, finishing: Bool) async throws(RooftopError) -> Bool {
        let settings = bulkLoading.withLock { $0.thresholds }
        // Read first: most calls find nothing to do, and need not wait for the writer.
        let due = try read { db -> Int? in
            guard let builtTo = try LocalStore.bulkBound(scope: scope, datastore: datastore, db) else { return nil }
            if finishing { return 0 }
            let since = try LocalStore.storedSince(builtTo, db)
            let live = try LocalStore.liveObjects(scope: scope, datastore: datastore, db)
            let built = max(Double(live) - Double(since), 0)
            // A growth that is not a finite fraction (thresholds are set by tests) counts as none.
            let growth = settings.growth.isFinite ? max(settings.growth, 0) : 0
            let minimum = max(settings.passSize, Int(min(built * growth, Double(Int.max / 2))))
            return since >= minimum ? minimum : nil
        }
        guard let minimum = due else { return false }
        // The entries are made again from what is stored: a pass lost in a crash is made again.
        return try await writeLong(scope: scope, durability: .deferred) { transaction in
            try transaction.buildBulkEntries(datastore, minimum: finishing ? nil : minimum)
        }
    }

    /// Where a bulk load of a scope's datastore stands: its objects from this row key on have no
    /// entries yet; `nil` when no load is under way.
    static func bulkBound(scope: String, datastore: DatastoreID, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT built_to FROM bulk_loads WHERE scope = ? AND datastore = ?"),
            arguments: [scope, datastore.rawValue])
    }

    /// How many objects (of every datastore) have a row key from `key` on: the keys given since.
    static func storedSince(_ key: Int64, _ db: Database) throws -> Int {
        let (count, overflow) = try nextObjectKey(db).subtractingReportingOverflow(key)
        return overflow || count < 0 ? 0 : Int(clamping: count)
    }
}

extension StoreTransaction {
    /// A pass of a bulk load of `datastore` (``LocalStore/buildBulkEntries(scope:datastore:finishing:)``):
    /// builds the entries of its objects from `built_to` to the last row key, sorted, and moves
    /// `built_to` past them, when there are at least `minimum` keys since (`nil`: always, and the
    /// load ends).
    /// - Returns: Whether it ran.
    func buildBulkEntries(_ datastore: DatastoreID, minimum: Int?) throws -> Bool {
        guard let builtTo = try LocalStore.bulkBound(scope: scope, datastore: datastore, db) else { return false }
        if let minimum, try LocalStore.storedSince(builtTo, db) < minimum { return false }
        try entries.flushCounts(db)
        let upper = try LocalStore.nextObjectKey(db)
        // The bound first: the entries' statement builds those of objects below it.
        if minimum == nil {
            try db.execute(
                sql: "DELETE FROM bulk_loads WHERE scope = ? AND datastore = ?", arguments: [scope, datastore.rawValue])
        } else {
            try db.execute(
                sql: "UPDATE bulk_loads SET built_to = ? WHERE scope = ? AND datastore = ?",
                arguments: [upper, scope, datastore.rawValue])
        }
        try StoreTransaction.indexEntries(
            where: "o.key >= ? AND o.key < ? AND o.scope = ? AND o.datastore = ?",
            [builtTo, upper, scope, datastore.rawValue], ordered: true, db)
        entries.forgetBulkBounds()
        return true
    }
}
