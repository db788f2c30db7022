import RooftopShared

/// Component schemas of values and identifiers: the portable ``Value`` JSON form
/// (`Value+Codable.swift`), its tagged kinds, and the ID and time formats every other type uses.
extension OpenAPIDocument {
    /// An ID (class name, object ID, field name, user ID): 1-64 characters of the ``Identifier``
    /// alphabet; IDs with a leading `:` are reserved for Rooftop.
    static let identifierPattern = #"^(?=.{1,64}$):?[A-Za-z0-9._+/=-]+$"#
    /// An ID that may not be reserved (mutation IDs, role names).
    static let unreservedIdentifierPattern = #"^[A-Za-z0-9._+/=-]{1,64}$"#

    static var valueSchemas: [(String, OpenAPIJSON)] {
        typealias S = OpenAPISchema
        return [
            (
                "Identifier",
                S.string(
                    "An ID (class name, object ID, field name, user ID): 1-64 characters of `A-Z a-z 0-9 . - _ + / =`. IDs starting with `:` are reserved for Rooftop and refused where an app names a class, object or field.",
                    pattern: identifierPattern, examples: ["GameScore", "01jd0s8m6bz8r1w0q2a3c4d5e6"])
            ),
            (
                "DatastoreID",
                S.string(
                    "A datastore ID. Private (per user, chosen by the app): 1-64 of `a-z 0-9 . - _`, not starting or ending with `.`. Shareable (created by the server): `.` and 1-63 of `A-Z a-z 0-9 - _`. The app-wide datastore: `:app`.",
                    pattern: #"^(:app|\.[A-Za-z0-9_-]{1,63}|[a-z0-9_-]([a-z0-9._-]{0,62}[a-z0-9_-])?)$"#,
                    examples: [":app", "default", ".Xy3kP0q"])
            ),
            (
                "DatastoreKind",
                S.enumeration(
                    ["private", "shareable", "app"], "The kind of a datastore, from the form of its ID.")
            ),
            (
                "MutationID",
                S.string(
                    "A client-chosen idempotency key for one mutation, unique per user: 1-64 of `A-Z a-z 0-9 . - _ + / =`, not starting with `:`.",
                    pattern: unreservedIdentifierPattern, examples: ["01jd0s8m6c7q9x2v4b5n3k1h0z"])
            ),
            (
                "Checkpoint",
                S.string(
                    "A position in a datastore's change feed, chosen by the server and opaque to clients: send it back unchanged as `since`.",
                    examples: ["c:1042"])
            ),
            (
                "Timestamp",
                S.integer("Milliseconds since 1970-01-01T00:00:00Z.").setting("examples", [1_763_779_346_123])
            ),
            (
                "Principal",
                S.string(
                    "Who an ACL entry or sharing role is for: `*` (everyone), `role:Name` (members of a role) or a user ID.",
                    pattern: #"^(\*|role:[A-Za-z0-9._+/=-]{1,64}|(?=.{1,64}$):?[A-Za-z0-9._+/=-]+)$"#,
                    examples: ["*", "role:Moderators", "u1"])
            ),
            ("Value", valueSchema),
            ("DoubleValue", tagged("$double", doubleText, "A double, as its shortest round-trip decimal text.")),
            ("DateValue", tagged("$date", S.ref("Timestamp"), "A point in time.")),
            ("BytesValue", bytesValueSchema),
            (
                "DecimalValue",
                tagged(
                    "$decimal",
                    S.string(
                        "The decimal's text, kept exactly (`1.50` stays `1.50`); ordered by numeric value.",
                        pattern: #"^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]{1,9})?$"#,
                        maxLength: DecimalNumber.maxLength),
                    "An arbitrary-precision decimal number.")
            ),
            ("GeoPointValue", tagged("$geoPoint", S.ref("GeoPoint"), "A geographic point.")),
            (
                "DayValue",
                tagged(
                    "$day", S.string("`yyyy-mm-dd`, years 1-9999.", pattern: #"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"#),
                    "A calendar date without time or time zone.")
            ),
            ("JSONValue", tagged("$json", ["description": "Any JSON document."], "Any JSON (a `json` field).")),
            ("PointerValue", tagged("$pointer", S.ref("Pointer"), "A to-one reference to an object.")),
            ("RelationValue", tagged("$relation", S.ref("Relation"), "A to-many reference to objects of one class.")),
            (
                "GeoPoint",
                S.object(
                    "A point on Earth, in degrees.", required: ["latitude", "longitude"],
                    properties: [
                        "latitude": S.number("Latitude.", minimum: -90, maximum: 90),
                        "longitude": S.number("Longitude.", minimum: -180, maximum: 180),
                    ])
            ),
            (
                "Pointer",
                S.object(
                    "An object's class and ID.", required: ["className", "objectId"],
                    properties: ["className": S.ref("Identifier"), "objectId": S.ref("Identifier")])
            ),
            (
                "Relation",
                S.object(
                    "A set of objects of one class; the IDs are sorted by their UTF-8 bytes and unique.",
                    required: ["className", "objectIds"],
                    properties: [
                        "className": S.ref("Identifier"),
                        "objectIds": S.array(S.ref("Identifier"), "The members' object IDs."),
                    ])
            ),
        ]
    }

    private static var valueSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.oneOf(
            """
            A field value in Rooftop's portable JSON form. JSON's own types carry null, bool, int \
            (an integral number), string and list; every other kind is an object with one `$` tag. \
            The server writes doubles as `{"$double": "1.5"}`; a bare number with a non-integral \
            fraction (`1.5`) is read as a double, a bare integral number (`2`, also `2.0`) as an int.
            """,
            [
                ["type": "null", "description": "null"],
                S.boolean("bool"),
                ["type": "number", "description": "int (an integral number that fits in 64 bits), or a double when it has a non-integral fraction"],
                S.string("string"),
                S.array(S.ref("Value"), "list"),
                S.ref("DoubleValue"), S.ref("DateValue"), S.ref("BytesValue"), S.ref("DecimalValue"),
                S.ref("GeoPointValue"), S.ref("DayValue"), S.ref("JSONValue"), S.ref("PointerValue"),
                S.ref("RelationValue"),
            ],
            examples: [
                42, "text", [1, 2], ["$double": "1.5"], ["$date": 1_763_779_346_123], ["$decimal": "1.50"],
                ["$geoPoint": ["latitude": 40.4, "longitude": -3.7]], ["$day": "2026-11-22"],
                ["$json": ["a": [1, nil]]], ["$pointer": ["className": "Post", "objectId": "abc"]],
                ["$relation": ["className": "User", "objectIds": ["a", "b"]]],
                ["$bytes": "aGVsbG8=", "mimeType": "text/plain"],
            ])
    }

    private static var doubleText: OpenAPIJSON {
        OpenAPISchema.string(
            "The shortest decimal that reads back to the same bits, or `Infinity`, `-Infinity`, `NaN`.",
            pattern: #"^(NaN|Infinity|-Infinity|-?[0-9][0-9.eE+-]*)$"#, examples: ["1.5", "-0.0", "5e-324", "NaN"])
    }

    private static var bytesValueSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "Binary data with an optional media type.", required: ["$bytes"],
            properties: [
                "$bytes": S.string("The bytes, base64-encoded.").setting("contentEncoding", "base64"),
                "mimeType": S.string("The media type, e.g. `image/png`."),
            ])
    }

    /// A tagged value: an object with the one member `tag`.
    private static func tagged(_ tag: String, _ payload: OpenAPIJSON, _ description: String) -> OpenAPIJSON {
        .object([
            .init(key: "type", value: "object"),
            .init(key: "description", value: .string(description)),
            .init(key: "required", value: [.string(tag)]),
            .init(key: "properties", value: .members([(tag, payload)])),
            .init(key: "additionalProperties", value: false),
        ])
    }
}
