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

    @Test("removing a member that makes a value another variant's requires it; an answer's variant requires what it always writes")
    func requiredAcrossVariants() throws {
        // A `loose` shape with a radius is a circle, without one a box: the radius is not optional.
        let schemas = try SchemaBuilder.schemas([], unions: [Shape<Fallback>.self], requests: ["Shape"])
        let circle = try OpenAPIDerivedSchemaTests.schemaJSON(schemas[1].schema)
        #expect(circle["required"] as? [String] == ["kind", "radius"])
        let answers = try SchemaBuilder.schemas([], unions: [Shape<Notes>.self], requests: [])
        let box = try OpenAPIDerivedSchemaTests.schemaJSON(answers[2].schema)
        #expect(box["required"] as? [String] == ["kind", "width"], "a box always writes its kind and width, not its label")
        let members = try #require(box["properties"] as? [String: [String: Any]])
        #expect(members.values.allSatisfy { $0["anyOf"] == nil })
    }

    @Test("a variant without examples, alternatives that are no sequence, a union example that does not decode, a constant an example lacks or describes beyond words stop the document")
    func moreDefectsFail() throws {
        let cases: [(any UnionSchema.Type, String)] = [
            (Shape<NoExample>.self, "no example to record"),
            (Shape<BadAlternatives>.self, "the alternatives are not a YAML sequence"),
            (Shape<BadUnionExample>.self, "Shape"),
            (Shape<ConstantLacking>.self, "an example has no string 'label'"),
            (Shape<ConstantNoted>.self, "the constant 'kind' has a note beyond its description"),
            (Shape<Unheld>.self, "'radius' is read but no example holds it"),
        ]
        for (union, message) in cases {
            let failure = try #require(throws: SchemaRecorder.Failure.self) { try SchemaBuilder.schemas([], unions: [union]) }
            #expect(failure.description.contains(message), "\(failure.description)")
        }
    }

    @Test("a value of every case of every union is a documented variant and validates against the union's schema")
    func everyCaseDocumented() async throws {
        var checker = OpenAPISchemaChecker()
        var problems: [String] = []
        try check(Value.self, UnionCases.values, cases: 14, UnionCases.index, &checker, &problems)
        try check(FieldOperation.self, UnionCases.operations, cases: 10, UnionCases.index, &checker, &problems)
        try check(ObjectChange.self, UnionCases.changes, cases: 2, UnionCases.index, &checker, &problems)
        try check(QueryRequest.self, UnionCases.requests, cases: 2, UnionCases.index, &checker, &problems)
        try check(
            QueryPredicate.self, UnionCases.predicates, cases: 13 + QueryPredicate.ComparisonOperator.allCases.count,
            UnionCases.index, &checker, &problems)
        try check(MutationResult.self, UnionCases.results, cases: 2, UnionCases.index, &checker, &problems)
        try check(PullChange.self, UnionCases.pullChanges, cases: 3, UnionCases.index, &checker, &problems)
        try check(LiveClientMessage.self, UnionCases.clientMessages, cases: 2, UnionCases.index, &checker, &problems)
        try check(LiveServerMessage.self, UnionCases.serverMessages, cases: 3, UnionCases.index, &checker, &problems)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        let failures = try await checker.failures()
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// Checks that `samples` (JSON texts) hold every one of `union`'s `cases` (numbered by
    /// `index`, an exhaustive switch), that each is a variant the notes list (or, for a value, one
    /// of JSON's own kinds), and adds each, as the union encodes it, to `checker`.
    private func check<U: UnionSchema>(
        _ union: U.Type, _ samples: [String], cases: Int, _ index: (U) -> Int,
        _ checker: inout OpenAPISchemaChecker, _ problems: inout [String]
    ) throws {
        let values = try samples.map { try JSONDecoder().decode(U.self, from: Data($0.utf8)) }
        let missing = Set(0..<cases).subtracting(values.map(index))
        if !missing.isEmpty { problems.append("\(U.schemaName): no sample of cases \(missing.sorted())") }
        let variants = Set(U.unionNotes.variants.map(\.name)).union(["null", "boolean", "number", "string", "array"])
        for (sample, value) in zip(samples, values) {
            if !variants.contains(value.schemaVariant) { problems.append("\(U.schemaName): \(sample) is \(value.schemaVariant)") }
            try checker.add("\(U.schemaName): \(sample)", value, schema: U.schemaName)
        }
    }
}

/// The notes a test union is recorded with.
private protocol ShapeNotes {
    static var notes: UnionNotes { get }
}

/// A union told apart by `kind`, whose decoder asks `contains` before reading, as the wire unions
/// do. Kind `shape` is a circle with a radius, else a box; kind `loose` tries a circle's radius
/// and falls back to a box without reading more.
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
        if kind == "loose" {
            // Tries a circle, then falls back to a box, as a decoder that tries branches does.
            if let radius = try? container.decode(Double.self, forKey: .radius) {
                self = .circle(radius: radius)
            } else {
                self = .box(width: 1, label: nil, kind: kind)
            }
            return
        }
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

/// A circle's variant, rightly noted.
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

/// A `loose` circle, whose radius's absence makes it a box.
private enum Fallback: ShapeNotes {
    static let notes = UnionNotes(
        "A shape.",
        variants: [
            .init("Circle", "A circle.", recorded: [#"{"kind": "loose", "radius": 2}"#], properties: ["radius": .init("Radius.")]),
            .init("Box", "A box.", recorded: [#"{"kind": "box", "width": 2}"#]),
        ])
}

/// A variant without an example.
private enum NoExample: ShapeNotes {
    static let notes = UnionNotes("A shape.", variants: [.init("Circle", "A circle.")])
}

/// Alternatives written as a mapping.
private enum BadAlternatives: ShapeNotes {
    static let notes = UnionNotes("A shape.", alternatives: "type: 'null'", variants: [circle])
}

/// A union example that is no shape.
private enum BadUnionExample: ShapeNotes {
    static let notes = UnionNotes("A shape.", examples: [#"{"kind": "triangle"}"#], variants: [circle])
}

/// A constant member one example lacks.
private enum ConstantLacking: ShapeNotes {
    static let notes = UnionNotes(
        "A shape.",
        variants: [
            .init(
                "Box", "A box.", recorded: [#"{"kind": "box", "width": 2, "label": "a"}"#, #"{"kind": "box", "width": 2}"#],
                constants: ["label"])
        ])
}

/// A constant whose note gives it a pattern.
private enum ConstantNoted: ShapeNotes {
    static let notes = UnionNotes(
        "A shape.", discriminator: "kind",
        variants: [
            .init(
                "Circle", "A circle.", recorded: [#"{"kind": "circle", "radius": 1}"#],
                properties: ["kind": .init("Kind.", constraints: [.pattern("^c")])])
        ])
}

/// A `loose` box, whose decoder read a radius it does not hold.
private enum Unheld: ShapeNotes {
    static let notes = UnionNotes("A shape.", variants: [.init("Box", "A box.", recorded: [#"{"kind": "loose"}"#])])
}
