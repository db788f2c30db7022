import RooftopShared
import Yams

/// A type the OpenAPI document names by a component schema: either one derived from the type
/// (``DocumentedSchema``, ``UnionSchema``) or one written by hand in `openapi-components.yaml`
/// (a string of a given form, a map whose keys have one: JSON no decoder's reads describe).
protocol NamedSchema {
    /// The component's name: `#/components/schemas/NAME`.
    static var schemaName: String { get }
}

extension NamedSchema {
    static var schemaName: String { APIOperation.schemaName(of: Self.self) }
}

/// A wire type whose component schema is derived from the type itself: its members, which of them
/// are required and what type each holds come from recording how the type decodes its examples
/// (``SchemaRecorder``); what the type cannot say — descriptions, ranges, patterns — comes from
/// its ``schemaNotes``. A member the notes describe that the type does not decode, or a member it
/// decodes that the notes leave undescribed where the type alone says too little, is a build
/// defect the document tests report.
///
/// ```swift
/// extension RevokedSessions: DocumentedSchema {
///     static let schemaNotes = SchemaNotes(
///         "How many sessions were ended.",
///         examples: [#"{"revoked": 2}"#],
///         properties: ["revoked": .init(constraints: [.minimum(0)])])
/// }
/// ```
protocol DocumentedSchema: NamedSchema, Codable {
    /// What the document says of the type beyond what its decoding shows.
    static var schemaNotes: SchemaNotes { get }
}

/// A string enumeration: its schema is `{type: string, enum: [cases]}`, in place.
protocol EnumeratedSchema {
    /// The raw values, in declaration order.
    static var schemaCases: [String] { get }
}

extension EnumeratedSchema where Self: CaseIterable & RawRepresentable, RawValue == String {
    static var schemaCases: [String] { allCases.map(\.rawValue) }
}

/// What the document says of a ``DocumentedSchema`` type beyond what its decoding shows.
struct SchemaNotes: Sendable {
    /// The schema's description.
    var description: String
    /// Example values as JSON texts, shown in the document under `examples`. Each is decoded
    /// with the type (so each is a value the server accepts) and recorded.
    var examples: [String]
    /// More values as JSON texts, recorded but not shown: members an example leaves out that the
    /// type reads only when they are there. ``examples`` and these together hold every member
    /// the type may read, and there is at least one of either.
    var recorded: [String]
    /// Notes on members, by wire name.
    var properties: [String: PropertyNote]

    /// Notes on a type.
    /// - Parameters:
    ///   - description: The schema's description.
    ///   - examples: Example values shown in the document, as JSON texts (default none).
    ///   - recorded: More values to record, not shown, as JSON texts (default none).
    ///   - properties: Notes on members, by wire name (default none).
    init(
        _ description: String, examples: [String] = [], recorded: [String] = [],
        properties: [String: PropertyNote] = [:]
    ) {
        self.description = description
        self.examples = examples
        self.recorded = recorded
        self.properties = properties
    }
}

/// What the document says of one member beyond its name, whether it is required and its type.
struct PropertyNote: Sendable {
    /// The member's description, if any.
    var description: String?
    /// The member's schema when its Swift type says too little (a `String` that must be an
    /// identifier, say): the name of a component; `nil` derives it from the Swift type.
    var reference: String?
    /// For an array member whose elements' Swift type says too little: the component each
    /// element follows.
    var items: String?
    /// A schema written out in full (YAML), for shapes no Swift type states; overrides
    /// ``reference`` and the derived schema.
    var schema: String?
    /// Keywords after the type: ranges, lengths, patterns, formats, defaults.
    var constraints: [SchemaConstraint]

    /// A note on a member.
    /// - Parameters:
    ///   - description: The member's description (default none).
    ///   - reference: A component the member follows instead of its Swift type's schema
    ///     (default none).
    ///   - items: A component an array member's elements follow (default none).
    ///   - schema: The member's whole schema as YAML (default none).
    ///   - constraints: Keywords after the type (default none).
    init(
        _ description: String? = nil, reference: String? = nil, items: String? = nil, schema: String? = nil,
        constraints: [SchemaConstraint] = []
    ) {
        self.description = description
        self.reference = reference
        self.items = items
        self.schema = schema
        self.constraints = constraints
    }
}

/// A JSON Schema keyword a member's Swift type does not state.
enum SchemaConstraint: Sendable, Hashable {
    case minimum(Double)
    case maximum(Double)
    case minLength(Int)
    case maxLength(Int)
    case minItems(Int)
    case maxItems(Int)
    case pattern(String)
    case format(String)
    /// A boolean default.
    case defaultValue(Bool)
    /// Example values of the member, as JSON texts.
    case examples([String])
    /// `propertyNames` of a map: the component its keys follow.
    case keys(String)
    /// `uniqueItems: true`: an array's elements are distinct.
    case uniqueItems
    /// `contentEncoding`: how a string encodes bytes (`base64`).
    case contentEncoding(String)
}
