import Foundation
import GRDB
import Synchronization
import RooftopSQL
import RooftopShared

/// What the client's local store and the server's SQLite storage share on top of GRDB: the
/// functions compiled queries call, and the binding of compiled arguments.
package enum RooftopSQLite {
    /// Registers the functions ``SQLDialect/sqlite`` queries call on a connection:
    /// - `rooftop_distance(latitude, longitude, otherLatitude, otherLongitude)`, the great-circle
    ///   distance in meters computed by ``GeoPoint/distanceMeters(to:)`` itself, so that SQL's
    ///   `near` agrees with the shared evaluator to the last bit (`NULL` for invalid coordinates);
    /// - `rooftop_field(document, field, part)`, for a store that keeps no rows of some fields
    ///   (``SQLIndexLayout/document``): `part` of the value of `field` in the object stored as
    ///   `document`, as its `object_fields` row would hold it: `'kind'` (the kind's raw value),
    ///   `'key'` (``Value/sortKey``, whatever its length), `'latitude'` or `'longitude'` (of a
    ///   point); `NULL` when the object lacks the field, or the value is not a point;
    /// - `rooftop_field_contains(document, field, key)`: 1 when the value of `field` is a list
    ///   with an element, or a relation with a member, whose key is `key`; else 0.
    ///
    /// A document that is not a stored object fails the statement (its decoding error).
    ///
    /// ```swift
    /// configuration.prepareDatabase { db in RooftopSQLite.registerFunctions(db) }
    /// ```
    package static func registerFunctions(_ db: Database) {
        db.add(
            function: DatabaseFunction("rooftop_distance", argumentCount: 4, pure: true) { values in
                guard let latitude = Double.fromDatabaseValue(values[0]),
                    let longitude = Double.fromDatabaseValue(values[1]),
                    let otherLatitude = Double.fromDatabaseValue(values[2]),
                    let otherLongitude = Double.fromDatabaseValue(values[3]),
                    let point = try? GeoPoint(latitude: latitude, longitude: longitude),
                    let other = try? GeoPoint(latitude: otherLatitude, longitude: otherLongitude)
                else { return nil }
                return point.distanceMeters(to: other)
            })
        let reads = FieldReads()
        db.add(
            function: DatabaseFunction("rooftop_field", argumentCount: 3, pure: true) { values in
                guard let document = String.fromDatabaseValue(values[0]), let field = String.fromDatabaseValue(values[1]),
                    let value = try reads.value(of: field, in: document)
                else { return nil }
                switch String.fromDatabaseValue(values[2]) {
                case "kind": return Int64(value.kind.rawValue)
                case "key": return Data(value.sortKey)
                case "latitude": return value.geoPointValue?.latitude
                case "longitude": return value.geoPointValue?.longitude
                default: throw RooftopError(.illegalArgument, "rooftop_field reads a kind, key, latitude or longitude")
                }
            })
        db.add(
            function: DatabaseFunction("rooftop_field_contains", argumentCount: 3, pure: true) { values in
                guard let document = String.fromDatabaseValue(values[0]), let field = String.fromDatabaseValue(values[1]),
                    let key = Data.fromDatabaseValue(values[2]), let value = try reads.value(of: field, in: document)
                else { return false }
                return SQLIndexRows.IndexedValue.elementKeys(of: value).contains { $0.elementsEqual(key) }
            })
    }

    /// The field values read from the document of the row being tested: a condition on several
    /// fields, or several tests of one (`kind`, then `key`), read each value once per row.
    /// Keyed by the document's text, it can never be stale.
    private final class FieldReads: Sendable {
        private struct Last {
            var document = ""
            var values: [String: Value?] = [:]
        }

        private let last = Mutex(Last())

        /// The value of `field` in the object stored as `document`.
        /// - Throws: A decoding error for text that is not a stored object.
        func value(of field: String, in document: String) throws -> Value? {
            if let known = last.withLock({ $0.document == document ? $0.values[field] : nil }) { return known }
            let value = try ObjectSnapshot.field(field, ofDocument: document)
            last.withLock { last in
                if last.document != document { last = Last(document: document) }
                last.values.updateValue(value, forKey: field)
            }
            return value
        }
    }

    /// GRDB's arguments for compiled ones.
    package static func arguments(_ arguments: [SQLArgument]) -> StatementArguments {
        StatementArguments(
            arguments.map { argument -> DatabaseValue in
                switch argument {
                case .integer(let value): value.databaseValue
                case .real(let value): value.databaseValue
                case .text(let value): value.databaseValue
                case .blob(let value): Data(value).databaseValue
                }
            })
    }
}

extension Database {
    /// Runs one statement through the connection's statement cache: `execute(sql:arguments:)`
    /// compiles its SQL again on every call, which was an eighth of the offline queue's time.
    /// - Throws: GRDB's `DatabaseError`.
    package func executeCached(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
