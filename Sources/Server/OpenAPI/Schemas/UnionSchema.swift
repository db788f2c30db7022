import RooftopShared

/// A wire type whose JSON is one of several objects (its variants), told apart by a discriminator
/// member (`op`, `kind`, `status`, `type`) or by which members are there (a value's `$` tag, a
/// predicate's combinator). Its component schema is a `oneOf` of its variants' schemas, each
/// derived the way a ``DocumentedSchema``'s is: the union's own `init(from:)` runs on each of the
/// variant's examples (``SchemaRecorder``), and the variant's members, their types and their order
/// come from what it reads and writes.
///
/// Because a union's decoder branches on what it finds (often by asking `contains` first), which
/// members a variant requires is not read off the decoder's calls: a member is required when
/// every example of the variant holds it and none still decodes as the variant without it. A
/// member whose values in the examples are its only values (a discriminator, a predicate's `op`)
/// is a constant: its schema lists those values.
///
/// ```swift
/// extension PullChange: UnionSchema {
///     var schemaVariant: String {
///         switch self {
///         case .upsert: "UpsertChange"
///         case .tombstone: "TombstoneChange"
///         case .removal: "RemovalChange"
///         }
///     }
///     static let unionNotes = UnionNotes(
///         "One entry of a pull page.", discriminator: "kind",
///         variants: [.init("UpsertChange", "The object as it is now: store it.", recorded: [...]), ...])
/// }
/// ```
protocol UnionSchema: NamedSchema, Codable {
    /// What the document says of the union and of each variant beyond what decoding shows.
    static var unionNotes: UnionNotes { get }
    /// The name of the variant this value is (a component schema's name).
    var schemaVariant: String { get }
}

/// What the document says of a ``UnionSchema`` type.
struct UnionNotes: Sendable {
    /// The union's description.
    var description: String
    /// The member whose value names the variant, if one does: a constant of every variant, and
    /// the union's `discriminator`.
    var discriminator: String?
    /// Alternatives that are not objects (a value's `null`, numbers, strings, lists), as a YAML
    /// sequence of schemas listed before the variants; `nil` when every alternative is a variant.
    var alternatives: String?
    /// Example values of the union, as JSON texts, shown in the document.
    var examples: [String]
    /// The variants, in the document's order.
    var variants: [VariantNotes]

    /// Notes on a union.
    /// - Parameters:
    ///   - description: The union's description.
    ///   - discriminator: The member naming the variant (default none).
    ///   - alternatives: Schemas of alternatives that are not objects, as a YAML sequence
    ///     (default none).
    ///   - examples: Example values shown, as JSON texts (default none).
    ///   - variants: The variants, in order.
    init(
        _ description: String, discriminator: String? = nil, alternatives: String? = nil, examples: [String] = [],
        variants: [VariantNotes]
    ) {
        self.description = description
        self.discriminator = discriminator
        self.alternatives = alternatives
        self.examples = examples
        self.variants = variants
    }
}

/// What the document says of one variant of a ``UnionSchema``.
struct VariantNotes: Sendable {
    /// The variant's component name (what ``UnionSchema/schemaVariant`` says of its values).
    var name: String
    /// Its description, examples (each decoded by the union and required to be this variant) and
    /// member notes, as for a ``DocumentedSchema``.
    var notes: SchemaNotes
    /// Members whose values in the examples are all the values they take (besides the union's
    /// discriminator): their schema is a `const`, or an `enum` in the order the examples show them.
    var constants: [String]

    /// Notes on a variant.
    /// - Parameters:
    ///   - name: The component name.
    ///   - description: The variant's description.
    ///   - examples: Examples shown, as JSON texts (default none).
    ///   - recorded: More values to record, not shown (default none); with `examples`, at least one.
    ///   - constants: Members that take only the values the examples show (default none).
    ///   - properties: Notes on members, by wire name (default none).
    init(
        _ name: String, _ description: String, examples: [String] = [], recorded: [String] = [],
        constants: [String] = [], properties: [String: PropertyNote] = [:]
    ) {
        self.name = name
        notes = SchemaNotes(description, examples: examples, recorded: recorded, properties: properties)
        self.constants = constants
    }
}
