import RooftopShared

extension Value: UnionSchema {
    /// The tagged object a value is written as, or for the kinds JSON carries itself, the JSON type.
    var schemaVariant: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "number"
        case .string: "string"
        case .list: "array"
        case .double: "DoubleValue"
        case .date: "DateValue"
        case .bytes: "BytesValue"
        case .decimal: "DecimalValue"
        case .geoPoint: "GeoPointValue"
        case .day: "DayValue"
        case .json: "JSONValue"
        case .pointer: "PointerValue"
        case .relation: "RelationValue"
        }
    }

    static let unionNotes = UnionNotes(
        """
            A field value in Rooftop's portable JSON form. JSON's own types carry null, bool, int (an integral \
            number), string and list; every other kind is an object with one `$` tag. The server writes doubles as \
            `{"$double": "1.5"}`; a bare number with a non-integral fraction (`1.5`) is read as a double, a bare \
            integral number (`2`, also `2.0`) as an int.
            """,
        alternatives: """
            - type: 'null'
              description: 'null'
            - type: boolean
              description: bool
            - type: number
              description: int (an integral number that fits in 64 bits), or a double when it has a non-integral fraction
            - type: string
              description: string
            - type: array
              items:
                $ref: '#/components/schemas/Value'
              description: list
            """,
        examples: [
            "42", #""text""#, "[1, 2]", #"{"$double": "1.5"}"#, #"{"$date": 1763779346123}"#,
            #"{"$decimal": "1.50"}"#, #"{"$geoPoint": {"latitude": 40.4, "longitude": -3.7}}"#,
            #"{"$day": "2026-11-22"}"#, #"{"$json": {"a": [1, null]}}"#,
            #"{"$pointer": {"className": "Post", "objectId": "abc"}}"#,
            #"{"$relation": {"className": "User", "objectIds": ["a", "b"]}}"#,
            #"{"$bytes": "aGVsbG8=", "mimeType": "text/plain"}"#,
        ],
        variants: [
            .init(
                "DoubleValue", "A double, as its shortest round-trip decimal text.",
                recorded: [#"{"$double": "1.5"}"#],
                properties: [
                    "$double": .init(
                        "The shortest decimal that reads back to the same bits, or `Infinity`, `-Infinity`, `NaN`.",
                        constraints: [
                            .pattern("^(NaN|Infinity|-Infinity|-?[0-9][0-9.eE+-]*)$"),
                            .examples([#""1.5""#, #""-0.0""#, #""5e-324""#, #""NaN""#]),
                        ])
                ]),
            .init(
                "DateValue", "A point in time.", recorded: [#"{"$date": 1763779346123}"#],
                properties: ["$date": .init(reference: "Timestamp")]),
            .init(
                "BytesValue", "Binary data with an optional media type.",
                recorded: [#"{"$bytes": "aGVsbG8=", "mimeType": "text/plain"}"#],
                properties: [
                    "$bytes": .init("The bytes, base64-encoded.", constraints: [.contentEncoding("base64")]),
                    "mimeType": .init("The media type, e.g. `image/png`. `null` is the same as absent."),
                ]),
            .init(
                "DecimalValue", "An arbitrary-precision decimal number.", recorded: [#"{"$decimal": "1.50"}"#],
                properties: [
                    "$decimal": .init(
                        "The decimal's text, kept exactly (`1.50` stays `1.50`); ordered by numeric value.",
                        constraints: [
                            .pattern(#"^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]{1,9})?$"#), .maxLength(1000),
                        ])
                ]),
            .init(
                "GeoPointValue", "A geographic point.",
                recorded: [#"{"$geoPoint": {"latitude": 40.4, "longitude": -3.7}}"#]),
            .init(
                "DayValue", "A calendar date without time or time zone.", recorded: [#"{"$day": "2026-11-22"}"#],
                properties: [
                    "$day": .init("`yyyy-mm-dd`, years 1-9999.", constraints: [.pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}$")])
                ]),
            .init(
                "JSONValue", "Any JSON (a `json` field).", recorded: [#"{"$json": {"a": [1, null]}}"#],
                properties: ["$json": .init("Any JSON document.", schema: "{}")]),
            .init(
                "PointerValue", "A to-one reference to an object.",
                recorded: [#"{"$pointer": {"className": "Post", "objectId": "abc"}}"#]),
            .init(
                "RelationValue", "A to-many reference to objects of one class.",
                recorded: [#"{"$relation": {"className": "User", "objectIds": ["a", "b"]}}"#]),
        ])
}
