import Foundation
import RooftopShared
import Yams

/// The component schemas of ``DocumentedSchema`` types, derived from the types: an object schema
/// whose members, required list and member types come from recording how the type decodes its
/// examples (``SchemaRecorder``), with the descriptions and constraints of its notes. A
/// ``UnionSchema`` type gives a `oneOf` schema over its variants, and each variant an object
/// schema recorded the same way through the union's decoder (see ``UnionSchema`` for how its
/// required members and constants are found).
///
/// A member's Swift type gives its schema: a ``NamedSchema`` is a `$ref` to its component, an
/// ``EnumeratedSchema`` a string enumeration, `String`, `Bool`, integers and floating-point
/// numbers their JSON types, arrays and sets `array` of their elements' schema, string-keyed
/// dictionaries `object` of their values' schema. Any other type is a defect: the builder throws,
/// naming it.
///
/// Which members are required depends on who writes the JSON. A schema a request can hold (one
/// a request body refers to, directly or through other schemas) requires what the type's decoder
/// requires: what a caller must send. A schema only answers hold also requires what the type's
/// encoder always writes (``SchemaRecorder/alwaysWritten(_:examples:required:)``): what a caller
/// can count on finding. Likewise `null`: a request's schema takes it for each member the type
/// takes it for (``SchemaRecorder/Member/acceptsNull``: read with `decodeIfPresent`, which reads
/// `null` as absent); an answer's holds none, its encoder leaving out what a value lacks.
enum SchemaBuilder {
    /// The schema of each of `types`, then of each of `unions` followed by its variants', by name.
    /// - Parameters:
    ///   - types: The object types.
    ///   - unions: The union types (default none).
    ///   - written: The component schemas written by hand, by name: their references count when
    ///     working out which schemas a request can hold.
    ///   - requests: The schemas of request bodies.
    /// - Throws: ``SchemaRecorder/Failure`` naming the type (or variant) and member when an example
    ///   does not decode (or decodes as another variant), a member's type has no schema, or the
    ///   notes describe a member the type does not read.
    static func schemas(
        _ types: [any DocumentedSchema.Type], unions: [any UnionSchema.Type] = [], written: [String: Node] = [:],
        requests: Set<String> = []
    ) throws -> [(name: String, schema: Node)] {
        var entries: [Entry] = try types.map { .object(try Recording($0)) }
        for union in unions {
            let variants = try union.unionNotes.variants.map { try Recording(variant: $0, of: union) }
            entries.append(.union(name: union.schemaName, schema: try unionSchema(union, variants: variants)))
            entries += variants.map(Entry.object)
        }
        var graph: [String: [String]] = [:]
        for (name, schema) in written { graph[name] = references(in: schema) }
        for entry in entries {
            switch entry {
            case .object(let recording): graph[recording.name] = recording.properties.flatMap { references(in: $0.schema) }
            case .union(let name, let schema): graph[name] = references(in: schema)
            }
        }
        var reachable: Set<String> = []
        var next = Array(requests)
        while let name = next.popLast() {
            guard reachable.insert(name).inserted else { continue }
            next.append(contentsOf: graph[name] ?? [])
        }
        return try entries.map { entry in
            switch entry {
            case .object(let recording): (recording.name, try recording.node(answerOnly: !reachable.contains(recording.name)))
            case .union(let name, let schema): (name, schema)
            }
        }
    }

    /// The object schema of `type`; when `answerOnly`, its encoder's always-written members are
    /// required too.
    /// - Throws: ``SchemaRecorder/Failure`` as ``schemas(_:unions:written:requests:)`` does.
    static func schema(of type: any DocumentedSchema.Type, answerOnly: Bool = false) throws -> Node {
        try Recording(type).node(answerOnly: answerOnly)
    }

    /// A schema of the document, in the order it is written.
    private enum Entry {
        /// An object: a documented type or a union's variant.
        case object(Recording)
        /// A union's `oneOf`.
        case union(name: String, schema: Node)
    }

    /// The `oneOf` schema of `union` over its recorded `variants`: the alternatives that are not
    /// objects, then a reference to each variant; the discriminator's mapping from each variant's
    /// values of it; the union's examples, each decoded by the union.
    /// - Throws: ``SchemaRecorder/Failure`` when an example does not decode, the alternatives are
    ///   not a YAML sequence, or two variants claim one discriminator value.
    private static func unionSchema(_ union: any UnionSchema.Type, variants: [Recording]) throws -> Node {
        let notes = union.unionNotes
        do {
            var choices: [Node] = []
            if let yaml = notes.alternatives {
                guard case .sequence(let given)? = try Yams.compose(yaml: yaml) else {
                    throw SchemaRecorder.Failure(description: "the alternatives are not a YAML sequence")
                }
                choices = given.map(block)
            }
            choices += variants.map { .mapping(.init([reference($0.name)])) }
            var pairs: [(Node, Node)] = [(text("description"), text(notes.description)), (text("oneOf"), .sequence(.init(choices)))]
            if let discriminator = notes.discriminator {
                var mapping: [(Node, Node)] = []
                var claimed: Set<String> = []
                for variant in variants {
                    for value in variant.constants[discriminator] ?? [] {
                        guard claimed.insert(value).inserted else {
                            throw SchemaRecorder.Failure(description: "two variants have \(discriminator) '\(value)'")
                        }
                        mapping.append((text(value), text("#/components/schemas/\(variant.name)")))
                    }
                }
                pairs.append(
                    (text("discriminator"),
                     .mapping(.init([(text("propertyName"), text(discriminator)), (text("mapping"), .mapping(.init(mapping)))]))))
            }
            for example in notes.examples { _ = try JSONDecoder().decode(union, from: Data(example.utf8)) }
            if !notes.examples.isEmpty { pairs.append((text("examples"), .sequence(.init(try notes.examples.map(json))))) }
            return .mapping(.init(pairs))
        } catch {
            throw SchemaRecorder.Failure(description: "the schema of \(union.schemaName): \(error)")
        }
    }

    /// The names of the component schemas `node` refers to.
    private static func references(in node: Node) -> [String] {
        let prefix = "#/components/schemas/"
        switch node {
        case .mapping(let mapping):
            return mapping.flatMap { key, value -> [String] in
                if key.string == "$ref", let target = value.string, target.hasPrefix(prefix) {
                    return [String(target.dropFirst(prefix.count))]
                }
                return references(in: value)
            }
        case .sequence(let sequence):
            return sequence.flatMap(references)
        case .scalar, .alias:
            return []
        }
    }

    /// One member's schema: derived or given, then its description and constraints.
    /// - Parameters:
    ///   - nullable: Whether `null` is one of its values (`anyOf` the schema and `null`).
    static func property(_ member: SchemaRecorder.Member, _ note: PropertyNote, nullable: Bool) throws -> Node {
        var base: [(Node, Node)]
        if let yaml = note.schema {
            guard case .mapping(let given)? = try Yams.compose(yaml: yaml) else {
                throw SchemaRecorder.Failure(description: "the schema of '\(member.name)' is not a YAML mapping")
            }
            base = given.map { ($0.key, block($0.value)) }
        } else if let name = note.reference {
            base = [reference(name)]
        } else if let name = note.items {
            guard member.type is any SchemaSequence.Type else {
                throw SchemaRecorder.Failure(description: "'\(member.name)' has items in its notes but is not an array")
            }
            base = [(text("type"), text("array")), (text("items"), .mapping(.init([reference(name)])))]
        } else {
            guard let derived = derivedSchema(of: member.type) else {
                throw SchemaRecorder.Failure(
                    description: "'\(member.name)' is a \(member.type), which has no schema: make it a NamedSchema or give one")
            }
            base = derived
        }
        if nullable {
            base = [(text("anyOf"), .sequence(.init([.mapping(.init(base)), .mapping(.init([(text("type"), text("null"))]))])))]
        }
        if let description = note.description { base.append((text("description"), text(description))) }
        for constraint in note.constraints { base.append(try keyword(constraint)) }
        return .mapping(.init(base))
    }

    /// The schema a Swift type states, as mapping members; `nil` when it states none.
    static func derivedSchema(of type: Any.Type) -> [(Node, Node)]? {
        if let named = type as? any NamedSchema.Type { return [reference(named.schemaName)] }
        if let enumerated = type as? any EnumeratedSchema.Type {
            return [(text("type"), text("string")), (text("enum"), .sequence(.init(enumerated.schemaCases.map(text))))]
        }
        switch type {
        case is String.Type: return [(text("type"), text("string"))]
        case is Bool.Type: return [(text("type"), text("boolean"))]
        case is Int.Type, is Int64.Type: return [(text("type"), text("integer")), (text("format"), text("int64"))]
        case is Int32.Type: return [(text("type"), text("integer")), (text("format"), text("int32"))]
        case is Double.Type: return [(text("type"), text("number")), (text("format"), text("double"))]
        default: break
        }
        if let sequence = type as? any SchemaSequence.Type, let items = derivedSchema(of: sequence.elementType) {
            var pairs: [(Node, Node)] = [(text("type"), text("array")), (text("items"), .mapping(.init(items)))]
            if sequence.unique { pairs.append((text("uniqueItems"), Node("true"))) }
            return pairs
        }
        if let map = type as? any SchemaMap.Type, let values = derivedSchema(of: map.valueType) {
            return [(text("type"), text("object")), (text("additionalProperties"), .mapping(.init(values)))]
        }
        return nil
    }

    /// A constraint as a schema keyword and its value.
    private static func keyword(_ constraint: SchemaConstraint) throws -> (Node, Node) {
        switch constraint {
        case .minimum(let value): (text("minimum"), number(value))
        case .maximum(let value): (text("maximum"), number(value))
        case .minLength(let value): (text("minLength"), Node(String(value)))
        case .maxLength(let value): (text("maxLength"), Node(String(value)))
        case .minItems(let value): (text("minItems"), Node(String(value)))
        case .maxItems(let value): (text("maxItems"), Node(String(value)))
        case .pattern(let value): (text("pattern"), text(value))
        case .format(let value): (text("format"), text(value))
        case .defaultValue(let value): (text("default"), Node(value ? "true" : "false"))
        case .examples(let values): (text("examples"), .sequence(.init(try values.map(json))))
        case .keys(let name): (text("propertyNames"), .mapping(.init([reference(name)])))
        case .uniqueItems: (text("uniqueItems"), Node("true"))
        case .contentEncoding(let value): (text("contentEncoding"), text(value))
        }
    }

    /// A number as YAML writes it: whole numbers without a fraction.
    private static func number(_ value: Double) -> Node {
        if value.rounded() == value, abs(value) < 1e15, let whole = Int64(exactly: value) { return Node(String(whole)) }
        return Node(String(value))
    }

    /// `$ref: '#/components/schemas/NAME'`.
    static func reference(_ name: String) -> (Node, Node) {
        (text("$ref"), text("#/components/schemas/\(name)"))
    }

    /// A JSON text as a node, in block style like the rest of the document.
    static func json(_ source: String) throws -> Node {
        guard let node = try Yams.compose(yaml: source) else {
            throw SchemaRecorder.Failure(description: "an empty example")
        }
        return block(node)
    }

    /// `node` with every mapping and sequence in block style, and strings as plain as YAML allows.
    static func block(_ node: Node) -> Node {
        switch node {
        case .mapping(let mapping):
            return .mapping(.init(mapping.map { (block($0.key), block($0.value)) }, mapping.tag, .block))
        case .sequence(let sequence):
            return .sequence(.init(sequence.map(block), sequence.tag, .block))
        case .scalar(let scalar):
            guard scalar.style == .doubleQuoted || scalar.style == .singleQuoted else { return node }
            return text(scalar.string)
        case .alias:
            return node
        }
    }

    /// A string scalar (``OpenAPIPaths/text(_:)``).
    static func text(_ string: String) -> Node { OpenAPIPaths.text(string) }
}

/// An array or a set, for ``SchemaBuilder``: the schema of its elements.
protocol SchemaSequence {
    /// The elements' Swift type.
    static var elementType: Any.Type { get }
    /// Whether the elements are distinct (a set).
    static var unique: Bool { get }
}

extension Array: SchemaSequence {
    static var elementType: Any.Type { Element.self }
    static var unique: Bool { false }
}

extension Set: SchemaSequence {
    static var elementType: Any.Type { Element.self }
    static var unique: Bool { true }
}

/// A string-keyed dictionary, for ``SchemaBuilder``: the schema of its values.
protocol SchemaMap {
    /// The values' Swift type.
    static var valueType: Any.Type { get }
}

extension Dictionary: SchemaMap where Key == String {
    static var valueType: Any.Type { Value.self }
}
