import RooftopShared

/// How a field's tests are written in SQL: on its rows, on a compound index's entries, or on its
/// value read from the object's document (``Columns``).
extension SQLQueryCompiler {
    /// Where a test reads a field's kind, key, coordinates and elements.
    struct Columns {
        var kind: SQLFragment
        var key: SQLFragment
        var latitude: SQLFragment
        var longitude: SQLFragment
        /// Whether an element has the key bound as the fragment's last argument.
        var element: SQLFragment
        /// The distance from the point to another, bound as the fragment's last two arguments
        /// (latitude, longitude); `nil`: computed from ``latitude`` and ``longitude``.
        var distance: SQLFragment?
        /// Whether the key tests that narrow a read of the value index are worth making.
        var narrows = true
        /// The built-in column the value is, whose key tests compare the column itself
        /// (``builtInTest(_:_:)``).
        var builtIn: SQLIndexLayout.BuiltInColumn? = nil

        /// The columns of an `object_fields f` row, or of an `object_elements e` row.
        static let rows = Columns(
            kind: SQLFragment("f.kind"), key: SQLFragment("f.sort_key"), latitude: SQLFragment("f.latitude"),
            longitude: SQLFragment("f.longitude"), element: SQLFragment("e.element_key = ?"))

        /// The key of an `index_entries c` entry, `k1` (only key tests are made on it).
        static let entries = Columns(
            kind: SQLFragment("NULL"), key: SQLFragment("c.k1"), latitude: SQLFragment("NULL"),
            longitude: SQLFragment("NULL"), element: SQLFragment("0 = 1"))
    }

    /// The columns of `field` read from the object's document (`document`, its SQL).
    func documentColumns(_ field: String, document: String) -> Columns {
        Columns(
            kind: documentColumn(field, "kind"), key: documentColumn(field, "key"),
            latitude: documentColumn(field, "latitude"), longitude: documentColumn(field, "longitude"),
            element: SQLFragment("rooftop_field_contains(\(document), ?, ?)", [.text(field)]),
            distance: documentDistance(field), narrows: false)
    }

    /// The distance from the point that is `field`'s value in the object's document to another,
    /// bound as the fragment's last two arguments (latitude, longitude).
    func documentDistance(_ field: String) -> SQLFragment {
        SQLFragment("rooftop_field_distance(\(layout.document ?? "NULL"), ?, ?, ?)", [.text(field)])
    }

    /// `part` (`kind`, `key`, `latitude` or `longitude`) of `field`'s value in the object's
    /// document: `NULL` when the object lacks the field (or the value is not a point).
    func documentColumn(_ field: String, _ part: String) -> SQLFragment {
        SQLFragment("rooftop_field(\(layout.document ?? "NULL"), ?, '\(part)')", [.text(field)])
    }

    /// `tests`, all of them, on `columns`. Where keys narrow (not in a document), a band of
    /// points' keys already says the value is a point: that test is left out.
    func render(_ tests: [KeyTest], _ columns: Columns) -> SQLFragment {
        var tests = tests
        if columns.narrows, tests.contains(where: { if case .between = $0 { true } else { false } }) {
            tests.removeAll { if case .point = $0 { true } else { false } }
        }
        let parts = tests.map { render($0, columns) }
        return parts.dropFirst().reduce(parts.first ?? SQLFragment("1 = 1")) { $0 + SQLFragment(" AND ") + $1 }
    }

    func render(_ test: KeyTest, _ c: Columns) -> SQLFragment {
        if let column = c.builtIn, let fragment = builtInTest(test, column) { return fragment }
        switch test {
        case .exists:
            return c.kind + SQLFragment(" IS NOT NULL")
        case .compare(let op, let key):
            return c.key + SQLFragment(" \(op.rawValue) ?", [.blob(key)])
        case .oneOf(let keys):
            return c.key + SQLFragment(" IN (\(placeholderList(keys.count)))", keys.map { .blob($0) })
        case .below(let lower, let upper):
            return c.key + SQLFragment(" >= ? AND ", [.blob(lower)]) + c.key + SQLFragment(" < ?", [.blob(upper)])
        case .point:
            return c.latitude + SQLFragment(" IS NOT NULL")
        case .between(let low, let high):
            // A band of the index: nothing to narrow in a value read from the document.
            guard c.narrows else { return SQLFragment("1 = 1") }
            return c.key + SQLFragment(" >= ? AND ", [.blob(low)]) + c.key + SQLFragment(" <= ?", [.blob(high)])
        case .near(let point, let maximum):
            if let distance = c.distance {
                return SQLFragment(
                    distance.sql + " <= ?",
                    distance.arguments + [.real(point.latitude), .real(point.longitude), .real(maximum)])
            }
            // On an index's key, which is the point's own, the longitudes in reach and then the
            // distance (a function call) are read from the key alone: the index answers without
            // a lookup of each entry's row (SQLite looks up a row of a table without row IDs for
            // every entry it reads that a test needs a column of: 9,086 lookups where 1,052
            // points were in reach of a `near` within 5 km, in 100,000 objects).
            let longitudes = SQLQueryCompiler.longitudeRanges(around: point, within: maximum).flatMap {
                longitudeTest($0, key: c.key)
            }
            // Without SQL distance, only the longitudes: the evaluator decides the distance.
            guard let keyDistance = dialect.keyDistance else { return longitudes ?? SQLFragment("1 = 1") }
            let within = SQLFragment(
                keyDistance(c.key.sql, "?", "?") + " <= ?",
                c.key.arguments + [.real(point.latitude), .real(point.longitude), .real(maximum)])
            return longitudes.map { $0 + SQLFragment(" AND ") + within } ?? within
        case .box(let southwest, let northeast):
            // A point is in the box exactly when its key is in the band of the box's latitudes
            // and ends with the bytes of a longitude in the box: on an index's key, that reads
            // the index alone.
            guard c.narrows,
                let longitudes = longitudeTest(SQLQueryCompiler.longitudes(west: southwest, east: northeast), key: c.key)
            else { return box(southwest, northeast, c) }
            // A box whose south is north of its north holds no point (as the evaluator says).
            guard let band = SQLQueryCompiler.pointKeys(south: southwest.latitude, north: northeast.latitude) else {
                return SQLFragment("0 = 1")
            }
            return c.key + SQLFragment(" >= ? AND ", [.blob(band.low)]) + c.key
                + SQLFragment(" <= ? AND ", [.blob(band.high)]) + longitudes
        case .collection:
            return c.kind + SQLFragment(
                " IN (?, ?)", [.integer(Int64(Value.Kind.list.rawValue)), .integer(Int64(Value.Kind.relation.rawValue))])
        case .element(let key):
            return SQLFragment(c.element.sql, c.element.arguments + [.blob(key)])
        }
    }

    /// The test that a point lies in the box, on its coordinates (`c`'s ``Columns/latitude`` and
    /// ``Columns/longitude``).
    private func box(_ southwest: GeoPoint, _ northeast: GeoPoint, _ c: Columns) -> SQLFragment {
        var fragment =
            c.latitude + SQLFragment(" IS NOT NULL AND ") + c.latitude
            + SQLFragment(" >= ? AND ", [.real(southwest.latitude)]) + c.latitude
            + SQLFragment(" <= ?", [.real(northeast.latitude)])
        let low = SQLFragment(" >= ?", [.real(southwest.longitude)])
        let high = SQLFragment(" <= ?", [.real(northeast.longitude)])
        if southwest.longitude <= northeast.longitude {
            fragment = fragment + SQLFragment(" AND ") + c.longitude + low + SQLFragment(" AND ") + c.longitude + high
        } else {
            fragment = fragment + SQLFragment(" AND (") + c.longitude + low + SQLFragment(" OR ") + c.longitude + high
                + SQLFragment(")")
        }
        return fragment
    }

    /// The test that a point's key (`key`, in a band of points' keys) ends with the bytes of a
    /// longitude in one of `ranges` (``SQLQueryCompiler/longitudeKeys(_:)``), in parentheses;
    /// `nil` when there is no range, or a range's end is not a longitude.
    func longitudeTest(_ ranges: [ClosedRange<Double>], key: SQLFragment) -> SQLFragment? {
        let keyRanges = ranges.compactMap(SQLQueryCompiler.longitudeKeys)
        guard !keyRanges.isEmpty, keyRanges.count == ranges.count else { return nil }
        let longitude = SQLFragment("substr(") + key + SQLFragment(", \(SQLQueryCompiler.longitudeKeyStart))")
        let tests = keyRanges.map { keys in
            longitude + SQLFragment(" >= ? AND ", [.blob(keys.low)]) + longitude + SQLFragment(" <= ?", [.blob(keys.high)])
        }
        return SQLFragment("(") + joined(tests, with: " OR ") + SQLFragment(")")
    }

    /// The distance in meters from the point at `point` (two SQL expressions) to `other`, as
    /// `distanceSQL` spells it (its arguments in the order of its operands).
    func distance(
        _ distanceSQL: (String, String, String, String) -> String, _ point: (latitude: SQLFragment, longitude: SQLFragment),
        to other: GeoPoint
    ) -> SQLFragment {
        SQLFragment(
            distanceSQL(point.latitude.sql, point.longitude.sql, "?", "?"),
            point.latitude.arguments + point.longitude.arguments + [.real(other.latitude), .real(other.longitude)])
    }
}
