import Foundation
@testable import RooftopServer
import RooftopShared
import Testing
import Yams

/// Union schemas derived from the union types: each variant recorded through the union's own
/// decoder, its required members found by taking each away, the `oneOf` and the discriminator's
/// mapping built from the variants.
@Suite("OpenAPI union schemas")
struct OpenAPIUnionSchemaTests {
    @Test("a union is its alternatives then its variants; the discriminator maps each value its variants show")
    func unionFromVariants() throws {
        let schemas = try SchemaBuilder.schemas([], unions: [Shape<Notes>.self], requests: ["Shape"])
        #expect(schemas.map(\.name) == ["Shape", "Circle", "Box"])
        let union = try OpenAPIDerivedSchemaTests.schemaJSON(schemas[0].schema)
        #expect(union["description"] as? String == "A shape.")
        let choices = try #require(union["oneOf"] as? [[String: String]])
        #expect(
            choices == [
                ["type": "null", "description": "nothing"],
                ["$ref": "#/components/schemas/Circle"], ["$ref": "#/components/schemas/Box"],
            ])
        let discriminator = try #require(union["discriminator"] as? [String: Any])
        #expect(discriminator["propertyName"] as? String == "kind")
        #expect(
            discriminator["mapping"] as? [String: String]
                == ["circle": "#/components/schemas/Circle", "box": "#/components/schemas/Box",
                    "square": "#/components/schemas/Box"])
        #expect((union["examples"] as? [[String: Any]])?.first?["kind"] as? String == "circle")

        let circle = try OpenAPIDerivedSchemaTests.schemaJSON(schemas[1].schema)
        #expect(circle["required"] as? [String] == ["kind", "radius"])
        let circleMembers = try #require(circle["properties"] as? [String: [String: Any]])
        #expect(circleMembers["kind"] as? [String: String] == ["type": "string", "const": "circle"])
        #expect(circleMembers["radius"]?["type"] as? String == "number")

        let box = try OpenAPIDerivedSchemaTests.schemaJSON(schemas[2].schema)
        // `width` is read after `contains`, yet no box decodes without it: required. `label` is
        // read the same way and a box decodes without it: optional.
        #expect(box["required"] as? [String] == ["kind", "width"])
        let boxMembers = try #require(box["properties"] as? [String: [String: Any]])
        #expect(Array(boxMembers.keys).sorted() == ["kind", "label", "width"])
        #expect(boxMembers["kind"]?["enum"] as? [String] == ["box", "square"])
        #expect(boxMembers["kind"]?["description"] as? String == "Box or square.")
        #expect(box["additionalProperties"] as? Bool == false)
    }

    @Test("a variant whose example decodes as another, two variants with one discriminator value, or a bad constant stop the document")
    func defectsFail() throws {
        let mislabeled = try #require(throws: SchemaRecorder.Failure.self) {
            try SchemaBuilder.schemas([], unions: [Shape<Mislabeled>.self])
        }
        #expect(mislabeled.description.contains("Circle") && mislabeled.description.contains("decodes as Box"))
        let shared = try #require(throws: SchemaRecorder.Failure.self) {
            try SchemaBuilder.schemas([], unions: [Shape<SharedValue>.self])
        }
        #expect(shared.description.contains("two variants have kind 'shape'"))
        let numeric = try #require(throws: SchemaRecorder.Failure.self) {
            try SchemaBuilder.schemas([], unions: [Shape<NumericConstant>.self])
        }
        #expect(numeric.description.contains("'radius' is not read as a String"))
        let stray = try #require(throws: SchemaRecorder.Failure.self) {
            try SchemaBuilder.schemas([], unions: [Shape<StrayConstant>.self])
        }
        #expect(stray.description.contains("'size'"))
    }

    @Test("the served unions are the registry's, each variant's examples decode as that variant")
    func servedUnions() throws {
        let document = try OpenAPIDocument.load()
        let root = try #require(try JSONSerialization.jsonObject(with: Data(document.json)) as? [String: Any])
        let schemas = try #require((root["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        for union in WireSchemas.unions {
            let choices = try #require(schemas[union.schemaName]?["oneOf"] as? [[String: Any]])
            let references = choices.compactMap { $0["$ref"] as? String }
            #expect(references == union.unionNotes.variants.map { "#/components/schemas/\($0.name)" })
            for variant in union.unionNotes.variants {
                for example in variant.notes.examples + variant.notes.recorded {
                    let value = try JSONDecoder().decode(union, from: Data(example.utf8))
                    #expect((value as? any UnionSchema)?.schemaVariant == variant.name, "\(example)")
                }
            }
        }
        let value = try #require(schemas["Value"]?["oneOf"] as? [[String: Any]])
        #expect(value.prefix(5).compactMap { $0["type"] as? String } == ["null", "boolean", "number", "string", "array"])
    }
}

/// The notes a test union is recorded with.
private protocol ShapeNotes {
    static var notes: UnionNotes { get }
}

/// A union told apart by `kind`, whose decoder asks `contains` before reading, as the wire unions
/// do. Kind `shape` is a circle with a radius, else a box.
private enum Shape<N: ShapeNotes>: UnionSchema {
    case circle(radius: Double)
    case box(width: Int, label: String?, kind: String)

    static var schemaName: String { "Shape" }
    static var unionNotes: UnionNotes { N.notes }

    var schemaVariant: String {
        switch self {
        case .circle: "Circle"
        case .box: "Box"
        }
    }

    private enum CodingKeys: String, CodingKey { case kind, radius, width, label }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        if kind == "circle" || (kind == "shape" && container.contains(.radius)) {
            self = .circle(radius: try container.decode(Double.self, forKey: .radius))
            return
        }
        guard ["box", "square", "shape"].contains(kind), container.contains(.width) else {
            throw DecodingError.dataCorruptedError(forKey: .kind, in: container, debugDescription: "not a shape")
        }
        let label = container.contains(.label) ? try container.decode(String.self, forKey: .label) : nil
        self = .box(width: try container.decode(Int.self, forKey: .width), label: label, kind: kind)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .circle(let radius):
            try container.encode("circle", forKey: .kind)
            try container.encode(radius, forKey: .radius)
        case .box(let width, let label, let kind):
            try container.encode(kind, forKey: .kind)
            try container.encode(width, forKey: .width)
            try container.encodeIfPresent(label, forKey: .label)
        }
    }
}

private let circle = VariantNotes(
    "Circle", "A circle.", recorded: [#"{"kind": "circle", "radius": 1.5}"#], properties: ["radius": .init("The radius.")])

/// Notes that describe the test union rightly.
private enum Notes: ShapeNotes {
    static let notes = UnionNotes(
        "A shape.", discriminator: "kind", alternatives: "- type: 'null'\n  description: nothing",
        examples: [#"{"kind": "circle", "radius": 1}"#],
        variants: [
            circle,
            .init(
                "Box", "A box.", recorded: [#"{"kind": "box", "width": 2, "label": "a"}"#, #"{"kind": "square", "width": 2}"#],
                properties: ["kind": .init("Box or square."), "width": .init("Width."), "label": .init("Label.")]),
        ])
}

/// A circle's variant shown with a box.
private enum Mislabeled: ShapeNotes {
    static let notes = UnionNotes(
        "A shape.", discriminator: "kind",
        variants: [.init("Circle", "A circle.", recorded: [#"{"kind": "box", "width": 2}"#])])
}

/// Two variants whose examples share a discriminator value.
private enum SharedValue: ShapeNotes {
    static let notes = UnionNotes(
        "A shape.", discriminator: "kind",
        variants: [
            .init("Circle", "A circle.", recorded: [#"{"kind": "shape", "radius": 1}"#]),
            .init("Box", "A box.", recorded: [#"{"kind": "shape", "width": 1}"#]),
        ])
}

/// A constant that is a number.
private enum NumericConstant: ShapeNotes {
    static let notes = UnionNotes(
        "A shape.", variants: [.init("Circle", "A circle.", recorded: [#"{"kind": "circle", "radius": 1}"#], constants: ["radius"])])
}

/// A constant the union never reads.
private enum StrayConstant: ShapeNotes {
    static let notes = UnionNotes(
        "A shape.", variants: [.init("Circle", "A circle.", recorded: [#"{"kind": "circle", "radius": 1}"#], constants: ["size"])])
}
