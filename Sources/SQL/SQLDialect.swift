import RooftopShared

/// How a backend spells what differs between SQL dialects.
package struct SQLDialect: Sendable {
    /// The placeholder for the `index`-th argument (1-based).
    package var placeholder: @Sendable (_ index: Int) -> String
    /// Whether placeholders are numbered (``placeholder`` gives each its own text): compiled
    /// statements, written with `?`, are then renumbered.
    package var numbersPlaceholders: Bool
    /// The great-circle distance in meters between two points, as a SQL expression that gives
    /// exactly ``GeoPoint/distanceMeters(to:)``; `nil` when the backend cannot compute it so
    /// (then the shared evaluator decides distance conditions and orders).
    package var distance: (@Sendable (_ latitude: String, _ longitude: String, _ otherLatitude: String, _ otherLongitude: String) -> String)?
    /// The same distance from the point whose key (``Value/sortKey``) is `key` (`NULL` when
    /// `key` is not a point's): what an index's entries answer alone, without a lookup of each
    /// entry's row. `nil` exactly when ``distance`` is.
    package var keyDistance: (@Sendable (_ key: String, _ otherLatitude: String, _ otherLongitude: String) -> String)?
    /// Text comparison by bytes (SQLite's default `BINARY`; PostgreSQL needs `COLLATE "C"`).
    package var bytewiseText: @Sendable (_ expression: String) -> String
    /// The condition that an `objects` row (`o`) is not a tombstone.
    package var live: String
    /// How many `IN (SELECT …)` conditions a query may leave to the planner to turn into joins;
    /// the others are written so that it keeps them as (hashed) sub-plans. PostgreSQL's planner
    /// takes time growing steeply with the number of such joins: 4 seconds for 200, minutes for
    /// the thousand a query may hold; as sub-plans, milliseconds.
    package var plannedJoins: Int
    /// The rows of the texts in a JSON array bound at `placeholder`, for `IN (…)` over sets too
    /// large to bind one by one (``SQLTextSet``).
    package var textsOfJSONArray: @Sendable (_ placeholder: String) -> String
    /// The key (``Value/sortKey``) of a built-in field's value read from its column
    /// (``SQLIndexLayout/BuiltInColumn``): of a text column (`kind` ``Value/Kind/string``, no `00`
    /// byte) or of a column of milliseconds since the epoch (``Value/Kind/date``).
    package var builtInKey: @Sendable (_ kind: Value.Kind, _ column: String) -> String
    /// The argument a text column is compared with, for a bound given as UTF-8 bytes
    /// (``ColumnBound``); `nil` when the backend cannot compare the column with those bytes
    /// (then the column's key is compared instead, ``builtInKey``).
    package var textBound: @Sendable (_ bytes: [UInt8]) -> SQLArgument?

    /// SQLite: `?` placeholders and the `rooftop_distance` function the storage registers (Swift's
    /// own code, so it agrees with the evaluator to the last bit).
    package static let sqlite = SQLDialect(
        placeholder: { _ in "?" },
        numbersPlaceholders: false,
        distance: { "rooftop_distance(\($0), \($1), \($2), \($3))" },
        keyDistance: { "rooftop_key_distance(\($0), \($1), \($2))" },
        bytewiseText: { $0 },
        live: "o.deleted = 0",
        plannedJoins: .max,
        textsOfJSONArray: { "SELECT value FROM json_each(\($0))" },
        builtInKey: { "rooftop_key(\($0.rawValue), \($1))" },
        // Bound as bytes, cast to text: a prefix's successor may leave UTF-8, and SQLite compares
        // text bytewise all the same.
        textBound: { .blob($0) })

    /// PostgreSQL: `$n` placeholders, byte order for text, boolean tombstones. No distance:
    /// PostgreSQL's floating-point functions raise an error where IEEE arithmetic underflows
    /// (two points 1e-300 degrees apart), and a SQL function would not be Swift's, so distance
    /// conditions and orders go to the shared evaluator.
    package static let postgres = SQLDialect(
        placeholder: { "$\($0)" },
        numbersPlaceholders: true,
        distance: nil,
        keyDistance: nil,
        bytewiseText: { "(\($0) COLLATE \"C\")" },
        live: "NOT o.deleted",
        plannedJoins: 8,
        textsOfJSONArray: { "SELECT json_array_elements_text(CAST(\($0) AS json))" },
        builtInKey: { kind, column in
            // The kind byte, then the text's bytes (PostgreSQL's text holds no `00`, so none is
            // escaped) and `00 00`; or the milliseconds with the sign bit flipped, big-endian.
            // (`decode(…, 'hex')`: a `'\x…'` literal depends on `standard_conforming_strings`.)
            let kindByte = String(kind.rawValue + 1, radix: 16)
            let prefix = "decode('\(kindByte.count == 1 ? "0" + kindByte : kindByte)', 'hex')"
            return kind == .date
                ? "(\(prefix) || int8send(\(column) # (-9223372036854775807 - 1)))"
                : "(\(prefix) || convert_to(\(column), 'UTF8') || decode('0000', 'hex'))"
        },
        // Text, which PostgreSQL must hold as valid UTF-8: a bound that is not (a prefix's
        // successor may not be) is compared as a key.
        textBound: { bytes in String(validating: bytes, as: UTF8.self).map { .text($0) } })
}
