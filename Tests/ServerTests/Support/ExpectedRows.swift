import RooftopSQL
import RooftopShared

@testable import RooftopServer

/// The index rows and counts of values too long to index that a storage holds for its live
/// objects when no rebuild is under way (``RowFields``): worked out from each object's stored
/// state, as text to compare with what the storage's tables hold, on either backend.
struct ExpectedRows: Equatable {
    var fields: Set<String> = []
    var elements: Set<String> = []
    var counts: [String: Int64] = [:]

    /// Adds the rows of the live object `snapshot` (row key `objectKey`) of a class that keeps rows
    /// of `kept` (`nil`: every field).
    mutating func add(objectKey: Int64, datastoreKey: Int64, snapshot: ObjectSnapshot, kept: Set<String>?) {
        let rows = SQLIndexRows.diff(
            snapshot: SQLIndexRows.keeping(kept, of: snapshot), previous: nil, builtIns: RowFields.builtInRows(kept: kept))
        for row in rows.added {
            fields.insert(
                Self.field(
                    objectKey: objectKey, field: row.field, kind: row.kind, sortKey: row.sortKey, latitude: row.latitude,
                    longitude: row.longitude))
            for element in row.elements { elements.insert(Self.element(objectKey: objectKey, field: row.field, key: element)) }
        }
        for (field, delta) in rows.unindexed {
            counts[Self.count(datastoreKey: datastoreKey, className: snapshot.className, field: field), default: 0] += delta
        }
        counts = counts.filter { $0.value != 0 }
    }

    /// An `object_fields` row as text.
    static func field(
        objectKey: Int64, field: String, kind: Int64, sortKey: [UInt8]?, latitude: Double?, longitude: Double?
    ) -> String {
        "\(objectKey) \(field) \(kind) \(sortKey ?? []) \(latitude ?? 0) \(longitude ?? 0)"
    }

    /// An `object_elements` row as text.
    static func element(objectKey: Int64, field: String, key: [UInt8]) -> String {
        "\(objectKey) \(field) \(key)"
    }

    /// An `unindexed_fields` row's identity as text.
    static func count(datastoreKey: Int64, className: String, field: String) -> String {
        "\(datastoreKey) \(className) \(field)"
    }

    /// What differs between what a storage holds (`self`) and what it should (`expected`), a few
    /// of each, for a failure's message.
    func differences(from expected: ExpectedRows) -> String {
        let fields = fields.symmetricDifference(expected.fields).sorted().prefix(5)
        let elements = elements.symmetricDifference(expected.elements).sorted().prefix(5)
        return "field rows differ: \(Array(fields)); element rows differ: \(Array(elements)); counts \(counts) / \(expected.counts)"
    }
}
