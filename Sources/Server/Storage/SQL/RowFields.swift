import Logging
import RooftopSQL
import RooftopShared
import Synchronization

/// Which fields of a class have index rows (`object_fields`, `object_elements`), on both
/// backends (SQLite's ``SQLiteStorage/rowFields(of:_:)``, PostgreSQL's
/// ``PostgresStorage/rowFields(of:_:)``). A class that declares no index keeps rows of every field, as before declarations
/// existed; a class that declares indexes keeps rows only of the fields they name (and of the
/// built-in ones): the rows of a 420-letter text or of fields nobody queries by are most of what
/// a write writes (issue 19, "write less per record"). Conditions on and orders by a field
/// without rows read it from the stored body on SQLite (``SQLIndexLayout/serverSQLite``), with the
/// same keys; on PostgreSQL the shared evaluator decides them (``SQLIndexLayout/server``).
///
/// The state per class is a row of `class_rows` (none: every field, complete):
/// - `written`: the fields writers keep rows of (JSON array; `NULL`: every field);
/// - `complete`: the fields every object has exact rows of, which queries use (a subset of
///   `written`);
/// - `rebuilt_to`: while a declaration's change is being applied, the largest object key whose
///   rows are rebuilt (`NULL` when none is under way).
///
/// A change of what a class declares never rewrites its objects in the request: fields it drops
/// leave `complete` and `written` at once (their rows are no longer read), fields it adds join
/// `written` only, and a rebuild in the background brings each object's rows to `written`, in
/// batches of objects in key order, each batch a write transaction of its own. A writer keeps the
/// rows of `written` for an object the rebuild has passed, of `complete` for one it has not yet
/// reached (a new object too, and if SQLite gives it a key the rebuild has passed, the rows the
/// rebuild would have added are written with it: ``SQLiteStorage/addRows(of:beyond:className:objectKey:datastoreKey:_:)``), so that every object's rows of
/// `complete` stay exact throughout and the rebuild finds nothing to reconcile. When it reaches
/// the last object, `complete` becomes `written`. On PostgreSQL, where writers run at once, a
/// batch of the rebuild excludes the class's writers (an advisory lock they share,
/// ``PostgresStatements/LockWrites``), and a new object's key is always ahead of the rebuild.
struct RowFields: Equatable {
    /// The fields writers keep rows of; `nil`: every field.
    var written: Set<String>?
    /// The fields every object has exact rows of; `nil`: every field.
    var complete: Set<String>?
    /// The largest object key rebuilt so far, while a rebuild is under way.
    var rebuiltTo: Int64?

    /// Every field's rows, complete: a class without a row.
    static let every = RowFields(written: nil, complete: nil, rebuiltTo: nil)

    /// The fields whose rows a writer keeps for the object with key `objectKey` (`nil`: a new
    /// object, whose key is not known yet: the writer adds what its key needs once inserted):
    /// `nil` for every field.
    func kept(objectKey: Int64?) -> Set<String>? {
        guard let rebuiltTo else { return written }
        guard let objectKey, objectKey <= rebuiltTo else { return complete }
        return written
    }

    /// The fields queries may read rows of (``SQLQueryCompiler/indexedFields``): `createdAt` and
    /// `updatedAt` too when they are among them, else read from the objects' columns; `objectId`
    /// is always read from its column (``SQLIndexLayout/serverSQLite``).
    var queried: Set<String>? { complete }

    /// The value-indexed fields a class's declared indexes name: `nil` (every field) when it
    /// declares none.
    static func declared(by indexes: [[String]]) -> Set<String>? {
        indexes.isEmpty ? nil : Set(indexes.joined())
    }

    /// The state after a class comes to declare `declared` (``declared(by:)``), or `nil` when its
    /// rows stay as they are.
    func declaring(_ declared: Set<String>?) -> RowFields? {
        guard declared != written else { return nil }
        let complete: Set<String>? =
            switch (self.complete, declared) {
            case (nil, let declared): declared
            case (let complete, nil): complete
            case (let complete?, let declared?): complete.intersection(declared)
            }
        // Every change starts a rebuild from the first object: it removes the rows of fields no
        // longer kept, and adds those of fields kept now.
        return RowFields(written: declared, complete: complete, rebuiltTo: complete == nil ? nil : 0)
    }

    /// The rows a rebuild adds to an object it passes (or a writer to a new object behind it): of
    /// the fields kept behind the rebuild but not yet ahead of it, `written` less `complete`,
    /// with its dates (`createdAt`, `updatedAt`) among them as fields of their own name. `nil`
    /// when there are none.
    func addedRows(of object: ObjectSnapshot) -> SQLIndexRows.Change? {
        guard let complete else { return nil }
        let values = SQLIndexRows.indexedValues(object, builtIns: RowFields.builtInRows(kept: nil))
        let added = values.filter { !complete.contains($0.key) && (written?.contains($0.key) ?? true) }
        guard !added.isEmpty else { return nil }
        return SQLIndexRows.diff(
            snapshot: ObjectSnapshot(className: object.className, objectId: "", fields: added), previous: nil, builtIns: [])
    }

    /// An object as a rebuild reads it: the fields of its stored body and its dates.
    /// - Throws: A decoding error for a body not written by this code.
    static func rebuilt(className: String, body: String, createdAt: Int64?, updatedAt: Int64?) throws -> ObjectSnapshot {
        var snapshot = ObjectSnapshot(
            className: className, objectId: "", fields: try StoredObjectBody.decodeDocument(body).fields)
        snapshot.createdAt = createdAt.map(Timestamp.init(millisecondsSinceEpoch:))
        snapshot.updatedAt = updatedAt.map(Timestamp.init(millisecondsSinceEpoch:))
        return snapshot
    }

    /// How a set of fields is stored in `class_rows` (a JSON array, sorted).
    static func text(_ fields: Set<String>) -> String {
        SQLTextSet.jsonArray(fields.sorted())
    }

    /// A set of fields as `class_rows` stores it (``text(_:)``); `nil` for `nil`.
    /// - Throws: A decoding error for a text not written by ``text(_:)``.
    static func fields(_ text: String?) throws -> Set<String>? {
        try text.map { Set(try DocumentCoding.decode([String].self, from: $0)) }
    }

    /// The built-in fields that have rows like any other field (on every write: made once).
    private static let dates: Set<String> = ["createdAt", "updatedAt"]

    /// The built-in fields with rows for an object that keeps rows of `kept` (`nil`: every
    /// field): `createdAt` and `updatedAt` as any other field, never `objectId`, which queries
    /// read from its column, where its unique index already finds it (``SQLIndexLayout/server``).
    static func builtInRows(kept: Set<String>?) -> Set<String> {
        kept.map { dates.intersection($0) } ?? dates
    }
}

/// A storage that rebuilds index rows in the background after a class's declared indexes
/// change (``RowFields``), batch after batch.
protocol RowRebuilding: AnyObject, Sendable {
    /// The background rebuild: at most one runs.
    var rowRebuild: RowRebuild { get }

    /// Rebuilds the rows of the next batch of objects of a class whose rows are being rebuilt,
    /// in one transaction. Returns whether a rebuild is still under way.
    /// - Parameter skipping: Classes not to rebuild now (their batches failed).
    /// - Throws: ``RowRebuildFailure`` naming the class whose batch failed.
    func rebuildRowsBatch(skipping: Set<String>) async throws -> Bool
}

extension RowRebuilding {
    /// Starts rebuilding rows in the background, batch after batch, unless it runs already (then
    /// it goes on to what is due now). A failure is logged; the rebuild resumes where it stopped
    /// at the next start (a declaration, the server's start; on SQLite the history sweep).
    func startRowRebuild() {
        rowRebuild.start { [self] in
            repeat {
                // A class whose batch fails waits for the next start; the others go on.
                var failing: Set<String> = []
                while !Task.isCancelled {
                    do {
                        guard try await rebuildRowsBatch(skipping: failing) else { break }
                    } catch let failure as RowRebuildFailure {
                        failing.insert(failure.className)
                        Logger(label: "rooftop.storage").error(
                            "index rows could not be rebuilt; resumed at the next start",
                            metadata: ["class": "\(failure.className)", "error": "\(failure.error)"])
                    } catch {
                        Logger(label: "rooftop.storage").error(
                            "index rows could not be rebuilt; resumed at the next start", metadata: ["error": "\(error)"])
                        break
                    }
                }
            } while rowRebuild.goesOn()
        }
    }

    /// Waits until no rebuild of rows runs (tests, and ``close()``).
    func rowRebuildFinished() async {
        while let task = rowRebuild.running() { await task.value }
    }
}

/// A batch of one class's rebuild that failed (a body that cannot be read, say).
struct RowRebuildFailure: Error {
    var className: String
    var error: any Error
}

/// The background rebuild of index rows (``SQLiteStorage/startRowRebuild()``): at most one runs,
/// and a start while it runs makes it look again when it has done.
final class RowRebuild: Sendable {
    /// The most objects per batch (one write transaction each).
    let batch: Int
    /// The most bytes of bodies a batch reads (then it ends after the object that passed it).
    let batchBytes = 8 << 20
    /// The most keys a batch walks past.
    var span: Int64 { Int64(batch) * 50 }

    /// The largest key a batch that starts past `rebuiltTo` may read (at most ``span`` keys on).
    func upperKey(after rebuiltTo: Int64) -> Int64 {
        let (limit, overflow) = rebuiltTo.addingReportingOverflow(span)
        return overflow ? Int64.max : limit
    }

    /// The state after a batch of `state`'s rebuild that read `count` objects and `bytes` of their
    /// bodies, the last with key `last`, of those up to `upper` (``upperKey(after:)``), in a table
    /// whose largest key is `end`: past the last object read when the batch was cut short, else
    /// past the whole span; complete once it has passed `end`.
    func advanced(_ state: RowFields, count: Int, bytes: Int, last: Int64, upper: Int64, end: Int64) -> RowFields {
        let cut = count == batch || bytes >= batchBytes
        let reached = cut ? last : upper
        guard reached < end else { return RowFields(written: state.written, complete: state.written, rebuiltTo: nil) }
        var next = state
        next.rebuiltTo = reached
        return next
    }

    private let state = Mutex(State())

    private struct State {
        var running = false
        var again = false
        var closed = false
        var task: Task<Void, Never>?
    }

    init(batch: Int) { self.batch = batch }

    /// Runs `work` in a task of its own unless a rebuild runs (which then goes on when it has
    /// done, see ``goesOn()``) or the storage is closed.
    func start(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            guard !state.closed else { return }
            guard !state.running else {
                state.again = true
                return
            }
            state.running = true
            state.again = false
            state.task = Task { await work() }
        }
    }

    /// Asked by the running rebuild when it has done: whether a start came meanwhile (it then
    /// looks again); otherwise the rebuild is over, in the same step, so no start is lost.
    func goesOn() -> Bool {
        state.withLock { state in
            if state.again && !state.closed {
                state.again = false
                return true
            }
            state.running = false
            state.task = nil
            return false
        }
    }

    /// The running rebuild's task, if one runs.
    func running() -> Task<Void, Never>? {
        state.withLock { $0.task }
    }

    /// Stops starting rebuilds and cancels the running one; returns it, to wait for.
    func close() -> Task<Void, Never>? {
        state.withLock { state in
            state.closed = true
            state.task?.cancel()
            return state.task
        }
    }
}
