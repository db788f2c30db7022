import RooftopShared

/// What the index tables (``SQLIndexLayout``) hold for an object, computed the same way for the
/// client's local store and the server's storage: one `object_fields` row per field (built-in
/// ones included), `object_elements` rows for the elements of lists and members of relations, the
/// fields whose values the index does not fully store, and who may read the object.
///
/// ```swift
/// let change = SQLIndexRows.diff(snapshot: new, previous: old)
/// // delete change.removed, insert change.added, add change.unindexed to the counts
/// ```
package enum SQLIndexRows {
    /// An `object_fields` row to insert, with the `object_elements` rows of a list or relation.
    package struct FieldRow: Sendable, Equatable {
        package var field: String
        package var kind: Int64
        /// The value's order-preserving key, `nil` past ``Value/indexedKeyLimit``.
        package var sortKey: [UInt8]?
        package var latitude: Double?
        package var longitude: Double?
        /// The keys of the elements (lists) or members (relations) short enough to index.
        package var elements: [[UInt8]]
    }

    /// What rewriting an object's rows changes.
    package struct Change: Sendable {
        /// Fields whose rows go (with their element rows when `elements`).
        package var removed: [(field: String, elements: Bool)]
        /// Rows to insert.
        package var added: [FieldRow]
        /// Changes to the count of objects per field whose values the index does not fully store.
        package var unindexed: [(field: String, delta: Int64)]
    }

    /// What the index stores of one value: its key and the keys of its list elements or relation
    /// members, each only when no longer than ``Value/indexedKeyLimit``.
    package struct IndexedValue: Sendable {
        /// The value's key, or `nil` when it is too long to index.
        package var key: [UInt8]?
        /// The distinct keys of its elements (lists) or members (relations) short enough to index.
        package var elements: Set<[UInt8]> = []
        /// Whether everything a query could ask of the value is indexed.
        package var isComplete: Bool

        /// Whether `body` holds for one of the keys of the elements of a list, or of the members
        /// of a relation (as pointers), tried in order until it does; `false` for another value.
        package static func anyElementKey(of value: Value, _ body: ([UInt8]) -> Bool) -> Bool {
            switch value {
            case .list(let elements): elements.contains { body($0.sortKey) }
            case .relation(let relation): relation.pointers.contains { body(Value.pointer($0).sortKey) }
            default: false
            }
        }

        package init(_ value: Value) {
            let key = value.indexedSortKey
            self.key = key
            var elements: Set<[UInt8]> = []
            var isComplete = key != nil
            _ = Self.anyElementKey(of: value) { element in
                if element.count <= Value.indexedKeyLimit { elements.insert(element) } else { isComplete = false }
                return false
            }
            self.elements = elements
            self.isComplete = isComplete
        }
    }

    /// The indexed values of an object: its fields and the built-in ones named in `builtIns`
    /// (all of them by default).
    package static func indexedValues(_ snapshot: ObjectSnapshot, builtIns: Set<String> = builtInFields) -> [String: Value] {
        var indexed = snapshot.fields
        if builtIns.contains("objectId") { indexed["objectId"] = .string(snapshot.objectId) }
        if builtIns.contains("createdAt"), let createdAt = snapshot.createdAt { indexed["createdAt"] = .date(createdAt) }
        if builtIns.contains("updatedAt"), let updatedAt = snapshot.updatedAt { indexed["updatedAt"] = .date(updatedAt) }
        return indexed
    }

    /// The rows that bring `previous` (the live version stored, if any) to `snapshot` (`nil`: a
    /// tombstone, no rows). Only the fields whose value changed are rewritten, so that a small
    /// change to an object with large lists stays cheap.
    ///
    /// A value whose key is longer than ``Value/indexedKeyLimit`` gets a row without a key (its
    /// kind still answers `exists`), a list element or relation member that long gets no row, and
    /// either counts the object in `unindexed_fields` for the field, which tells queries on that
    /// field to let the shared evaluator decide (``SQLQueryCompiler/evaluation(of:unindexed:)``).
    ///
    /// `builtIns`: the built-in fields that have rows (all by default; a store that reads some
    /// from its objects' own columns leaves those out, ``SQLIndexLayout/builtInColumns``).
    package static func diff(
        snapshot: ObjectSnapshot?, previous: ObjectSnapshot?, builtIns: Set<String> = builtInFields
    ) -> Change {
        var removed: [(field: String, elements: Bool)] = []
        var added: [FieldRow] = []
        let new = snapshot.map { indexedValues($0, builtIns: builtIns) } ?? [:]
        let old = previous.map { indexedValues($0, builtIns: builtIns) } ?? [:]
        var unindexed: [String: Int64] = [:]
        for (field, value) in old where new[field] != value {
            removed.append((field, value.kind == .list || value.kind == .relation))
            if !IndexedValue(value).isComplete { unindexed[field, default: 0] -= 1 }
        }
        for (field, value) in new where old[field] != value {
            let indexed = IndexedValue(value)
            let point = value.geoPointValue
            added.append(
                FieldRow(
                    field: field, kind: Int64(value.kind.rawValue), sortKey: indexed.key, latitude: point?.latitude,
                    longitude: point?.longitude, elements: Array(indexed.elements)))
            if !indexed.isComplete { unindexed[field, default: 0] += 1 }
        }
        return Change(
            removed: removed, added: added, unindexed: unindexed.filter { $0.value != 0 }.map { ($0.key, $0.value) })
    }

    /// `snapshot` with only the fields in `fields` (all when `nil`): what a store that keeps rows
    /// of those fields alone works its rows out from (built-in fields have rows as ``diff(snapshot:previous:builtIns:)`` says).
    package static func keeping(_ fields: Set<String>?, of snapshot: ObjectSnapshot) -> ObjectSnapshot {
        guard let fields else { return snapshot }
        var kept = snapshot
        kept.fields = snapshot.fields.filter { fields.contains($0.key) }
        return kept
    }

    /// The built-in fields, which have rows whatever a class declares, in every store but the
    /// server's SQLite storage (``SQLIndexLayout/builtInColumns``).
    package static let builtInFields: Set<String> = ["objectId", "createdAt", "updatedAt"]

    /// The principals a caller's queries are limited to (``SQLQueryCompiler``'s `readers`):
    /// `nil` (no limit) for the admin.
    package static func readers(for context: AccessContext) -> Set<String>? {
        context.isAdmin ? nil : Set(context.principals.map(\.description))
    }

    /// The reader set an object is filed under for queries (the server's `objects.readers`):
    /// its readers, or `*` alone when everyone may read it (who else may then read it makes no
    /// difference to a query, and each owner's public objects would otherwise be a set of their
    /// own that every caller's queries name); `nil` when nobody may read it.
    package static func readerSet(of readers: Set<String>) -> Set<String>? {
        if readers.contains("*") { return ["*"] }
        return readers.isEmpty ? nil : readers
    }

    /// The readers of an object that its reader set (``readerSet(of:)``) does not name: those
    /// besides `*` when everyone may read it, none otherwise. A store that keeps readers as sets
    /// keeps these apart to answer exactly for a caller who does not hold `*` (none of the
    /// server's callers: every caller's principals hold `*`).
    package static func readersBeyondSet(_ readers: Set<String>) -> Set<String> {
        readers.contains("*") ? readers.subtracting(["*"]) : []
    }

    /// The stored text of a reader set (`reader_sets.principals`): its principals as a JSON
    /// array, in the order of their UTF-8 bytes (SQLite's, and PostgreSQL's `COLLATE "C"`).
    package static func readerSetText(_ readers: Set<String>) -> String {
        SQLTextSet.jsonArray(readers.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    /// Who may read an object with `acl` (`object_readers.principal`): `*` for everyone (also
    /// when there is no ACL), user IDs, `role:Name`.
    package static func readers(of acl: ACL?) -> Set<String> {
        guard let acl else { return ["*"] }
        return Set(acl.entries.filter { $0.value.read }.keys.map(\.description))
    }
}
