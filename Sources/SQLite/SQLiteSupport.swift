import Foundation
import GRDB
import RooftopSQL
import RooftopShared

/// What the client's local store and the server's SQLite storage share on top of GRDB: the
/// functions compiled queries call, and the binding of compiled arguments.
package enum RooftopSQLite {
    /// Registers the functions ``SQLDialect/sqlite`` queries call on a connection:
    /// `rooftop_distance(latitude, longitude, otherLatitude, otherLongitude)`, the great-circle
    /// distance in meters computed by ``GeoPoint/distanceMeters(to:)`` itself, so that SQL's
    /// `near` agrees with the shared evaluator to the last bit (`NULL` for invalid coordinates).
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
