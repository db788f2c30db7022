/// Builders for the JSON Schema fragments of the OpenAPI document, so that each wire type reads
/// as one short declaration.
///
/// Objects are closed (`additionalProperties: false`): the schemas say exactly which members the
/// server writes and reads, so a member added to a Codable type without documenting it fails the
/// schema tests.
///
/// ```swift
/// OpenAPISchema.object(
///     "A request to sign in.", required: ["username", "password"],
///     properties: ["username": OpenAPISchema.string("The user name."), "password": OpenAPISchema.string("The password.")])
/// ```
enum OpenAPISchema {
    /// A reference to a component schema, with an optional description of this use of it.
    static func ref(_ name: String, _ description: String? = nil) -> OpenAPIJSON {
        let reference: OpenAPIJSON = ["$ref": .string("#/components/schemas/\(name)")]
        return description.map { reference.setting("description", .string($0)) } ?? reference
    }

    /// A string, optionally constrained by a pattern and a length.
    static func string(
        _ description: String, pattern: String? = nil, maxLength: Int? = nil, format: String? = nil,
        examples: [OpenAPIJSON] = []
    ) -> OpenAPIJSON {
        var pairs: [(String, OpenAPIJSON)] = [("type", "string"), ("description", .string(description))]
        if let pattern { pairs.append(("pattern", .string(pattern))) }
        if let maxLength { pairs.append(("maxLength", .int(maxLength))) }
        if let format { pairs.append(("format", .string(format))) }
        if !examples.isEmpty { pairs.append(("examples", .array(examples))) }
        return .members(pairs)
    }

    /// An integer (64-bit unless said otherwise), optionally bounded below.
    static func integer(_ description: String, format: String = "int64", minimum: Int? = nil) -> OpenAPIJSON {
        var pairs: [(String, OpenAPIJSON)] = [
            ("type", "integer"), ("format", .string(format)), ("description", .string(description)),
        ]
        if let minimum { pairs.append(("minimum", .int(minimum))) }
        return .members(pairs)
    }

    /// A number bounded on both sides.
    static func number(_ description: String, minimum: Double, maximum: Double) -> OpenAPIJSON {
        [
            "type": "number", "format": "double", "minimum": .double(minimum), "maximum": .double(maximum),
            "description": .string(description),
        ]
    }

    /// `true` or `false`.
    static func boolean(_ description: String) -> OpenAPIJSON {
        ["type": "boolean", "description": .string(description)]
    }

    /// An array of `items`.
    static func array(_ items: OpenAPIJSON, _ description: String) -> OpenAPIJSON {
        ["type": "array", "items": items, "description": .string(description)]
    }

    /// A JSON object used as a map from arbitrary keys to `values`; `keys` constrains the keys.
    static func map(_ values: OpenAPIJSON, _ description: String, keys: OpenAPIJSON? = nil) -> OpenAPIJSON {
        var pairs: [(String, OpenAPIJSON)] = [
            ("type", "object"), ("additionalProperties", values), ("description", .string(description)),
        ]
        if let keys { pairs.append(("propertyNames", keys)) }
        return .members(pairs)
    }

    /// A string that must be exactly `value` (a discriminator member such as `"op": "set"`).
    static func constant(_ value: String, _ description: String? = nil) -> OpenAPIJSON {
        let schema: OpenAPIJSON = ["type": "string", "const": .string(value)]
        return description.map { schema.setting("description", .string($0)) } ?? schema
    }

    /// A string from a fixed list.
    static func enumeration(_ values: [String], _ description: String) -> OpenAPIJSON {
        ["type": "string", "enum": .array(values.map(OpenAPIJSON.string)), "description": .string(description)]
    }

    /// A closed object: the listed properties, the `required` ones mandatory, nothing else.
    static func object(
        _ description: String, required: [String], properties: KeyValuePairs<String, OpenAPIJSON>,
        examples: [OpenAPIJSON] = []
    ) -> OpenAPIJSON {
        var pairs: [(String, OpenAPIJSON)] = [("type", "object"), ("description", .string(description))]
        if !required.isEmpty { pairs.append(("required", .array(required.map(OpenAPIJSON.string)))) }
        pairs.append(("properties", .members(properties.map { ($0.key, $0.value) })))
        pairs.append(("additionalProperties", false))
        if !examples.isEmpty { pairs.append(("examples", .array(examples))) }
        return .members(pairs)
    }

    /// Exactly one of `variants`; with a discriminator when the variants are component schemas
    /// told apart by one member (`op`, `kind`, `status`, `type`).
    static func oneOf(
        _ description: String, _ variants: [OpenAPIJSON], discriminator: String? = nil,
        mapping: KeyValuePairs<String, String> = [:], examples: [OpenAPIJSON] = []
    ) -> OpenAPIJSON {
        var pairs: [(String, OpenAPIJSON)] = [("description", .string(description)), ("oneOf", .array(variants))]
        if let discriminator {
            var members: [(String, OpenAPIJSON)] = [("propertyName", .string(discriminator))]
            if !mapping.isEmpty {
                let entries = mapping.map { ($0.key, OpenAPIJSON.string("#/components/schemas/\($0.value)")) }
                members.append(("mapping", .members(entries)))
            }
            pairs.append(("discriminator", .members(members)))
        }
        if !examples.isEmpty { pairs.append(("examples", .array(examples))) }
        return .members(pairs)
    }
}
