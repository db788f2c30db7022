import RooftopShared
import RooftopSQL

/// The columns of an `objects` row (`o`) joined with its datastore (`d`) that ``ObjectRow`` reads,
/// in its order.
let objectRowColumns = objectRowColumnList(datastoreID: "d.id")

/// ``objectRowColumns`` with the datastore's ID read by `datastoreID`, an SQL expression.
func objectRowColumnList(datastoreID: String) -> String {
    """
    o.key, o.class_name, o.object_id, \(datastoreID) AS datastore_id, o.body, o.created_at, o.updated_at, o.version, \
    o.sequence, o.deleted
    """
}

extension SQLIndexLayout {
    /// The server's layout, on both backends: pages select ``objectRowColumns``, and who may read
    /// an object is its reader set (`objects.readers`, `reader_set_members`) and the current
    /// readers the set does not name, the readers' history keeping no row a set tells
    /// (``ReaderHistoryWrite``, ``SQLIndexLayout/Readers/setsAndRows(current:)``; a row of the
    /// history is current until `to_sequence`). The built-in fields are the object row's own
    /// columns: `objectId` has no rows at all, which the objects' unique index finds, and
    /// `createdAt` and `updatedAt` have rows only where other fields would
    /// (``RowFields/builtInRows(kept:)``). PostgreSQL's storage compiles against this layout:
    /// a class that declares indexes keeps rows only of the fields they name
    /// (``SQLQueryCompiler/indexedFields``), and conditions on and orders by its other fields
    /// are left to the shared evaluator.
    static let server: SQLIndexLayout = {
        var layout = SQLIndexLayout(
            source: "objects o JOIN datastores d ON d.key = o.datastore_key", columns: objectRowColumns,
            readers: .setsAndRows(current: "r.to_sequence IS NULL"))
        layout.builtInColumns = [
            "objectId": BuiltInColumn(kind: .string, column: "o.object_id", always: true, nullable: false),
            "createdAt": BuiltInColumn(kind: .date, column: "o.created_at", always: false, nullable: true),
            "updatedAt": BuiltInColumn(kind: .date, column: "o.updated_at", always: false, nullable: true),
        ]
        return layout
    }()

    /// The SQLite storage's layout: ``server``'s, except that a class that declares indexes keeps rows
    /// only of the fields they name; conditions on and orders by its other fields read the
    /// stored body (``StoredObjectBody``) with the functions the storage registers
    /// (``SQLiteStorage/rowFields(of:_:)``). The built-in fields are ``server``'s.
    ///
    /// A page reads `objects o` alone, each row's datastore ID looked up by a sub-query: a join
    /// of `datastores` is one the planner may put first, and then it scanned every datastore
    /// around a walk of an index in the page's order (``SQLPagePlan``) and sorted what it found.
    static let serverSQLite: SQLIndexLayout = {
        let columns = objectRowColumnList(datastoreID: "(SELECT d.id FROM datastores d WHERE d.key = o.datastore_key)")
        var layout = SQLIndexLayout(source: "objects o", columns: columns, readers: server.readers, document: "o.body")
        layout.builtInColumns = server.builtInColumns
        return layout
    }()
}

extension SQLFragment {
    /// The scope of a query on the server: the objects of one datastore.
    static func datastore(_ key: Int64) -> SQLFragment {
        SQLFragment("o.datastore_key = ?", [.integer(key)])
    }
}
