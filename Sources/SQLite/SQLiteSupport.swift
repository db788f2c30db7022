import Foundation
import GRDB
import GRDBSQLite
import RooftopSQL
import RooftopShared

/// What the client's local store and the server's SQLite storage share on top of GRDB: the
/// functions compiled queries call, and the binding of compiled arguments.
package enum RooftopSQLite {
    /// The most of a database file one connection reads through a memory map (1 GiB):
    /// SQLite's own page cache is 2 MiB per connection, so a query over a file larger than that
    /// copied every page it read from the kernel with `pread` (40% of the server's time on a
    /// `near` within 5 km over 100,000 objects). Mapped, the pages are the kernel's page cache
    /// itself, shared by every connection; writes still go through `write`, so a full disk or a
    /// failed write is an error, not a signal. Past the map, reads go through `pread` as before.
    package static let mappedBytes = 1 << 30

    /// Reads `db`'s file through a memory map of up to ``mappedBytes`` (`PRAGMA mmap_size`).
    /// SQLite caps it at its own compile-time maximum, and a build without memory maps ignores it.
    /// - Throws: the database's error when the pragma fails.
    package static func mapPages(_ db: Database) throws {
        try db.execute(sql: "PRAGMA mmap_size = \(mappedBytes)")
    }

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
    ///   with an element, or a relation with a member, whose key is `key`; else 0;
    /// - `rooftop_field_distance(document, field, latitude, longitude)`: the distance in meters
    ///   from the point that is the value of `field` to the point at `latitude` and `longitude`, as
    ///   `rooftop_distance` gives it; `NULL` when the value is not a point;
    /// - `rooftop_key_distance(key, latitude, longitude)`: the same distance from the point whose
    ///   key (``Value/sortKey``) is the blob `key`, read back from the key (``GeoPoint/init(sortKey:)``);
    ///   `NULL` when `key` is not a point's key;
    /// - `rooftop_key(kind, value)`: the key (``Value/sortKey``) of a built-in field read from its
    ///   column (``SQLIndexLayout/BuiltInColumn``): of the string `value` when `kind` is
    ///   ``Value/Kind/string``, of the date `value` milliseconds after the epoch when it is
    ///   ``Value/Kind/date``; `NULL` for a `NULL` value, a value of another type or another kind.
    ///
    /// A document the reader cannot read (one it leaves to `Codable`, which refuses it) fails the
    /// statement with its decoding error. The reader checks only what it reads: text damaged
    /// elsewhere (a bad escape in another field) can still answer for the field asked.
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
        db.add(
            function: DatabaseFunction("rooftop_key_distance", argumentCount: 3, pure: true) { values in
                guard case .blob(let key) = values[0].storage, let point = GeoPoint(sortKey: key),
                    let otherLatitude = Double.fromDatabaseValue(values[1]),
                    let otherLongitude = Double.fromDatabaseValue(values[2]),
                    let other = try? GeoPoint(latitude: otherLatitude, longitude: otherLongitude)
                else { return nil }
                return point.distanceMeters(to: other)
            })
        db.add(
            function: DatabaseFunction("rooftop_key", argumentCount: 2, pure: true) { values in
                guard let kind = Int.fromDatabaseValue(values[0]).flatMap(Value.Kind.init(rawValue:)) else { return nil }
                switch (kind, values[1].storage) {
                case (.string, .string(let text)): return Data(Value.string(text).sortKey)
                case (.date, .int64(let milliseconds)):
                    return Data(Value.date(Timestamp(millisecondsSinceEpoch: milliseconds)).sortKey)
                default: return nil
                }
            })
        FieldReads.register(on: db)
    }

    /// `rooftop_field`, `rooftop_field_contains` and `rooftop_field_distance`, registered with SQLite's own API: a local
    /// query on a field without index rows calls them for every object of its class, and GRDB's
    /// wrapper copied each document into a `String` and boxed every argument and result (with
    /// reading the document by key names made as strings, 15 µs a call).
    ///
    /// Keeps the field values read from the document of the row being tested: a condition on
    /// several fields, or several tests of one (`kind`, then `key`), reads each value once per
    /// row. Keyed by the document's bytes, it can never be stale. One per connection, which SQLite
    /// calls on one thread at a time.
    private final class FieldReads: @unchecked Sendable {
        private var document: [UInt8] = []
        private var values: [String: Value?] = [:]

        static func register(on db: Database) {
            let reads = FieldReads()
            let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
            let functions: [(String, Int32, @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void)] = [
                ("rooftop_field", 3, { context, _, arguments in FieldReads.call(context, arguments, FieldReads.field) }),
                ("rooftop_field_contains", 3, { context, _, arguments in FieldReads.call(context, arguments, FieldReads.contains) }),
                ("rooftop_field_distance", 4, { context, _, arguments in FieldReads.call(context, arguments, FieldReads.distance) }),
            ]
            for (name, arguments, function) in functions {
                // Each function holds its own reference, released by SQLite with the function (when
                // the connection closes, or at once when registering fails): none can outlive it.
                // A function that failed to register fails the statements that call it.
                sqlite3_create_function_v2(
                    db.sqliteConnection, name, arguments, flags, Unmanaged.passRetained(reads).toOpaque(), function, nil, nil,
                    { context in context.map { Unmanaged<FieldReads>.fromOpaque($0).release() } })
            }
        }

        /// Runs `body` with the value of the field named by the second argument in the document
        /// that is the first (`nil`: no document, or no such field) and the arguments; reports a
        /// document that cannot be read as the statement's error.
        private static func call(
            _ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?,
            _ body: (OpaquePointer?, Value?, UnsafeMutablePointer<OpaquePointer?>) -> Void
        ) {
            guard let arguments, let reads = sqlite3_user_data(context) else { return sqlite3_result_null(context) }
            let instance = Unmanaged<FieldReads>.fromOpaque(reads).takeUnretainedValue()
            guard let text = sqlite3_value_text(arguments[0]), let name = sqlite3_value_text(arguments[1]) else {
                return body(context, nil, arguments)
            }
            let document = UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(arguments[0])))
            let field = String(cString: name)
            do {
                body(context, try instance.value(of: field, in: document), arguments)
            } catch {
                sqlite3_result_error(context, "a stored object cannot be read: \(error)", -1)
            }
        }

        /// `rooftop_field`: the part of the value its third argument names.
        private static func field(_ context: OpaquePointer?, _ value: Value?, _ arguments: UnsafeMutablePointer<OpaquePointer?>) {
            guard let value else { return sqlite3_result_null(context) }
            let name = sqlite3_value_text(arguments[2]).map { String(cString: $0) }
            switch name {
            case "kind": sqlite3_result_int64(context, Int64(value.kind.rawValue))
            case "key":
                value.sortKey.withUnsafeBytes { key in
                    sqlite3_result_blob(context, key.baseAddress, Int32(key.count), transientResult)
                }
            case "latitude", "longitude":
                guard let point = value.geoPointValue else { return sqlite3_result_null(context) }
                sqlite3_result_double(context, name == "latitude" ? point.latitude : point.longitude)
            default:
                sqlite3_result_error(context, "rooftop_field reads a kind, key, latitude or longitude", -1)
            }
        }

        /// `rooftop_field_distance`: the distance in meters from the point that is the value to
        /// the point at the third and fourth arguments (``GeoPoint/distanceMeters(to:)``); `NULL`
        /// when the value is not a point, or the coordinates are not a point's.
        private static func distance(
            _ context: OpaquePointer?, _ value: Value?, _ arguments: UnsafeMutablePointer<OpaquePointer?>
        ) {
            guard let point = value?.geoPointValue,
                let other = try? GeoPoint(
                    latitude: sqlite3_value_double(arguments[2]), longitude: sqlite3_value_double(arguments[3]))
            else { return sqlite3_result_null(context) }
            sqlite3_result_double(context, point.distanceMeters(to: other))
        }

        /// `rooftop_field_contains`: whether the value has an element (or member) whose key is the
        /// third argument.
        private static func contains(
            _ context: OpaquePointer?, _ value: Value?, _ arguments: UnsafeMutablePointer<OpaquePointer?>
        ) {
            guard let value, let bytes = sqlite3_value_blob(arguments[2]) else { return sqlite3_result_int64(context, 0) }
            let wanted = UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(arguments[2])))
            let found = SQLIndexRows.IndexedValue.anyElementKey(of: value) { $0.elementsEqual(wanted) }
            sqlite3_result_int64(context, found ? 1 : 0)
        }

        /// The value of `field` in the object stored as `document`.
        /// - Throws: A decoding error for text that is not a stored object.
        func value(of field: String, in document: UnsafeBufferPointer<UInt8>) throws -> Value? {
            let same = self.document.withUnsafeBufferPointer { kept in
                guard kept.count == document.count else { return false }
                guard let keptBytes = kept.baseAddress, let bytes = document.baseAddress else { return true }
                return memcmp(keptBytes, bytes, document.count) == 0
            }
            if same {
                if let known = values[field] { return known }
            } else {
                // Kept buffers: a scan of a class reads a new document on every call.
                self.document.removeAll(keepingCapacity: true)
                self.document.append(contentsOf: document)
                values.removeAll(keepingCapacity: true)
            }
            let value = try ObjectSnapshot.field(field, ofDocument: document)
            values.updateValue(value, forKey: field)
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

/// SQLite's `SQLITE_TRANSIENT`: a result is copied before the call that sets it returns.
private let transientResult = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
