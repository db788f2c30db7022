import Foundation
@testable import RooftopServer
import RooftopShared
import Testing
import Yams

/// Component schemas derived from the wire types: what a type reads is what its schema says,
/// whatever its coding code looks like, and a type the builder cannot describe fails loudly.
@Suite("OpenAPI derived schemas")
struct OpenAPIDerivedSchemaTests {
    @Test("members, required members and member types come from how the type decodes")
    func derivedFromDecoding() throws {
        let schema = try json(SchemaBuilder.schema(of: Sample.self))
        #expect(schema["required"] as? [String] == ["name", "tags"])
        let properties = try #require(schema["properties"] as? [String: [String: Any]])
        #expect(Set(properties.keys) == ["name", "count", "tags", "rules", "sharing", "probed", "kind", "unique"])
        #expect(properties["name"] as? [String: String] == ["type": "string", "description": "A name."])
        // What the type reads with `decodeIfPresent` takes `null` too (it reads it as absent);
        // what it reads with `decode`, after `contains` or not, does not.
        let count = try Self.nonNull(properties["count"])
        #expect(count["type"] as? String == "integer" && count["format"] as? String == "int64")
        #expect(properties["count"]?["minimum"] as? Int == 0)
        #expect(properties["tags"]?["items"] as? [String: String] == ["type": "string"])
        #expect(try Self.nonNull(properties["rules"])["additionalProperties"] as? [String: String] == ["$ref": "#/components/schemas/MergeRule"])
        #expect(try Self.nonNull(properties["sharing"]) as? [String: String] == ["$ref": "#/components/schemas/SharingRole"])
        #expect(properties["probed"] as? [String: String] == ["type": "boolean"])
        #expect(try Self.nonNull(properties["kind"])["enum"] as? [String] == MergeDecision.Resolution.allCases.map(\.rawValue))
        #expect(try Self.nonNull(properties["unique"])["uniqueItems"] as? Bool == true)
        #expect(schema["additionalProperties"] as? Bool == false)
        #expect(schema["examples"] == nil, "recorded values are not shown")
    }

    @Test("an answer's schema also requires what its encoder always writes, and holds no null; a request's does not")
    func answersRequireWhatIsAlwaysWritten() throws {
        let asAnswer = try json(SchemaBuilder.schema(of: Sample.self, answerOnly: true))
        #expect(asAnswer["required"] as? [String] == ["name", "count", "tags", "probed"])
        let answerMembers = try #require(asAnswer["properties"] as? [String: [String: Any]])
        #expect(answerMembers.values.allSatisfy { $0["anyOf"] == nil }, "an answer's encoder leaves out what it lacks")
        let documents = try SchemaBuilder.schemas([Sample.self], requests: ["Sample"])
        #expect(try json(documents[0].schema)["required"] as? [String] == ["name", "tags"])
        let unreferenced = try SchemaBuilder.schemas([Sample.self], requests: ["Other"])
        #expect(try json(unreferenced[0].schema)["required"] as? [String] == ["name", "count", "tags", "probed"])
        let other = try #require(try compose(yaml: "$ref: '#/components/schemas/Sample'"))
        let throughWritten = try SchemaBuilder.schemas([Sample.self], written: ["Other": other], requests: ["Other"])
        #expect(try json(throughWritten[0].schema)["required"] as? [String] == ["name", "tags"])
    }

    /// The schema of a member that takes `null` too, without `null`: fails when `null` is not
    /// one of its values.
    private static func nonNull(_ property: [String: Any]?) throws -> [String: Any] {
        let choices = try #require(property?["anyOf"] as? [[String: Any]], "\(String(describing: property)) takes no null")
        #expect(choices.count == 2 && choices.last as? [String: String] == ["type": "null"])
        return try #require(choices.first)
    }

    @Test("a type the builder cannot describe, or notes on a member the type does not read, fail with the type's name")
    func defectsFail() throws {
        let undescribable = try #require(throws: SchemaRecorder.Failure.self) { try SchemaBuilder.schemas([Undescribable.self]) }
        #expect(undescribable.description.contains("Undescribable") && undescribable.description.contains("'when'"))
        let stray = try #require(throws: SchemaRecorder.Failure.self) { try SchemaBuilder.schemas([StrayNote.self]) }
        #expect(stray.description.contains("StrayNote") && stray.description.contains("'nmae'"))
        let bad = try #require(throws: SchemaRecorder.Failure.self) { try SchemaBuilder.schemas([BadExample.self]) }
        #expect(bad.description.contains("BadExample"))
        let twice = try #require(throws: SchemaRecorder.Failure.self) { try SchemaBuilder.schemas([ReadTwice.self]) }
        #expect(twice.description.contains("'name' is read as Int and as Double"))
        let nested = try #require(throws: SchemaRecorder.Failure.self) { try SchemaBuilder.schemas([NestedRead.self]) }
        #expect(nested.description.contains("'inner'") && nested.description.contains("no schema"))
    }

    @Test("a member read as a nested object takes the schema its notes give; decodeNil requires the member")
    func nestedAndNil() throws {
        let schema = try json(SchemaBuilder.schema(of: NestedDescribed.self))
        #expect(schema["required"] as? [String] == ["inner", "maybe"])
        let properties = try #require(schema["properties"] as? [String: [String: Any]])
        #expect(properties["inner"]?["type"] as? String == "object")
        let maybe = try #require(properties["maybe"]?["anyOf"] as? [[String: String]])
        #expect(maybe == [["type": "string"], ["type": "null"]])
    }

    @Test("requests reach schemas through derived members and through written schemas, nullable ones included")
    func reachability() throws {
        let derived = try SchemaBuilder.schemas([Holder.self, Sample.self], requests: ["Holder"])
        #expect(try json(derived[1].schema)["required"] as? [String] == ["name", "tags"])
        let alone = try SchemaBuilder.schemas([Holder.self, Sample.self], requests: [])
        #expect(try json(alone[1].schema)["required"] as? [String] == ["name", "count", "tags", "probed"])
    }

    @Test("a derived schema whose name is also written by hand stops the document")
    func nameTaken() throws {
        let components = "components:\n  schemas:\n    Sample:\n      type: string\n"
        let schemas = try SchemaBuilder.schemas([Sample.self])
        #expect(throws: RooftopError.self) { try OpenAPIDocument(components: components, schemas: schemas, operations: []) }
    }

    @Test("every wire type's recording agrees with its coding: what it writes it reads, what it requires it needs")
    func recordingsAgreeWithCoding() throws {
        var disagreements: [String] = []
        for subject in try Self.subjects() {
            let members = try subject.examples.flatMap { try SchemaRecorder.record(subject.type, example: $0).members }
            let names = Set(members.map(\.name))
            for example in subject.examples {
                let value = try JSONDecoder().decode(subject.type, from: Data(example.utf8))
                for key in try SchemaRecorder.writtenKeys(of: value) where !names.contains(key) {
                    disagreements.append("\(subject.name) writes '\(key)', never read")
                }
            }
            let required = Set(subject.schema["required"] as? [String] ?? [])
            for name in names.sorted() {
                var decodedWithout = false
                var present = false
                for example in subject.examples {
                    var object = try #require(try JSONSerialization.jsonObject(with: Data(example.utf8)) as? [String: Any])
                    if object.removeValue(forKey: name) != nil { present = true }
                    let data = try JSONSerialization.data(withJSONObject: object)
                    // A union's value without the member may decode as another variant: that is not this one.
                    if let decoded = try? JSONDecoder().decode(subject.type, from: data),
                        ((decoded as? any UnionSchema)?.schemaVariant ?? subject.name) == subject.name
                    {
                        decodedWithout = true
                    }
                }
                if required.contains(name) && decodedWithout {
                    disagreements.append("\(subject.name).\(name) is required but a value without it decodes")
                }
                if !required.contains(name) && present && !decodedWithout {
                    disagreements.append("\(subject.name).\(name) is optional but no example decodes without it")
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    }

    @Test("every derived schema has a description, and so does each member but components and a variant's constants")
    func everyMemberDescribed() throws {
        let document = try OpenAPIDocument.load()
        let root = try #require(try JSONSerialization.jsonObject(with: Data(document.json)) as? [String: Any])
        let schemas = try #require((root["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        var undescribed: [String] = []
        // Each schema's name, and the members that need no description (a discriminator's value
        // names its variant).
        var names: [(String, Set<String>)] = []
        for type in WireSchemas.documented { names.append((type.schemaName, [])) }
        for union in WireSchemas.unions {
            names.append((union.schemaName, []))
            let discriminator = union.unionNotes.discriminator.map { [$0] } ?? []
            for variant in union.unionNotes.variants { names.append((variant.name, Set(discriminator + variant.constants))) }
        }
        for (name, constants) in names {
            let schema = try #require(schemas[name], "\(name) is not in the document")
            #expect((schema["description"] as? String)?.isEmpty == false, "\(name) has no description")
            for (member, property) in schema["properties"] as? [String: [String: Any]] ?? [:] {
                if property["description"] == nil && property["$ref"] == nil && !constants.contains(member) {
                    undescribed.append("\(name).\(member)")
                }
            }
        }
        #expect(undescribed.isEmpty, "members with neither a description nor a component: \(undescribed.sorted())")
    }

    /// A schema derived from recordings: a documented type, or a union's variant.
    struct Subject {
        /// The component's name.
        var name: String
        /// The type recorded: the documented type, or the variant's union.
        var type: any Codable.Type
        /// The examples recorded.
        var examples: [String]
        /// The derived schema, as a request's.
        var schema: [String: Any]
    }

    /// Every documented type and every variant of every union, with its derived schema.
    static func subjects() throws -> [Subject] {
        let documented = try WireSchemas.documented.map { type in
            Subject(
                name: type.schemaName, type: type, examples: type.schemaNotes.examples + type.schemaNotes.recorded,
                schema: try schemaJSON(SchemaBuilder.schema(of: type)))
        }
        let variants = try WireSchemas.unions.flatMap { union in
            let schemas = try SchemaBuilder.schemas([], unions: [union], requests: [union.schemaName])
            return try union.unionNotes.variants.map { variant in
                let schema = try #require(schemas.first { $0.name == variant.name }?.schema)
                return Subject(
                    name: variant.name, type: union, examples: variant.notes.examples + variant.notes.recorded,
                    schema: try schemaJSON(schema))
            }
        }
        return documented + variants
    }

    /// A schema node as JSON.
    static func schemaJSON(_ node: Node) throws -> [String: Any] {
        let text = try YAMLToJSON.convert(serialize(node: node))
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    private func json(_ node: Node) throws -> [String: Any] { try Self.schemaJSON(node) }
}

/// Reads its members every way a hand-written decoder does.
private struct Sample: DocumentedSchema {
    var name: String
    var count: Int
    var tags: [String]
    var rules: [String: MergeRule]?
    var sharing: SharingRole?
    var probed: Bool
    var kind: MergeDecision.Resolution?
    var unique: Set<String>?

    static let schemaNotes = SchemaNotes(
        "A sample.", recorded: [#"{"name": "a", "tags": [], "probed": true, "kind": "rule", "unique": ["x"]}"#],
        properties: ["name": .init("A name."), "count": .init(constraints: [.minimum(0)])])

    private enum CodingKeys: String, CodingKey { case name, count, tags, rules, sharing, probed, kind, unique }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        count = try container.decodeIfPresent(Int.self, forKey: .count) ?? 0
        tags = try container.decode([String].self, forKey: .tags)
        rules = try container.decodeIfPresent([String: MergeRule].self, forKey: .rules)
        sharing = try container.decodeIfPresent(SharingRole.self, forKey: .sharing)
        probed = container.contains(.probed) ? try container.decode(Bool.self, forKey: .probed) : false
        kind = try container.decodeIfPresent(MergeDecision.Resolution.self, forKey: .kind)
        unique = try container.decodeIfPresent(Set<String>.self, forKey: .unique)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(count, forKey: .count)
        try container.encode(tags, forKey: .tags)
        try container.encodeIfPresent(rules, forKey: .rules)
        try container.encodeIfPresent(sharing, forKey: .sharing)
        try container.encode(probed, forKey: .probed)
        try container.encodeIfPresent(kind, forKey: .kind)
        try container.encodeIfPresent(unique, forKey: .unique)
    }
}

/// Holds a type no schema is derived for.
private struct Undescribable: DocumentedSchema {
    var when: Date
    static let schemaNotes = SchemaNotes("Undescribable.", recorded: [#"{"when": 0}"#])
}

/// Its notes describe a member it does not have.
private struct StrayNote: DocumentedSchema {
    var name: String
    static let schemaNotes = SchemaNotes(
        "Stray.", recorded: [#"{"name": "a"}"#], properties: ["nmae": .init("A typo.")])
}

/// Its only example is not a value of it.
private struct BadExample: DocumentedSchema {
    var name: String
    static let schemaNotes = SchemaNotes("Bad.", examples: [#"{"name": 1}"#])
}

/// Reads one member as two types.
private struct ReadTwice: DocumentedSchema {
    static let schemaNotes = SchemaNotes("Twice.", recorded: [#"{"name": 1}"#])
    private enum CodingKeys: String, CodingKey { case name }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _ = try container.decodeIfPresent(Int.self, forKey: .name)
        _ = try container.decode(Double.self, forKey: .name)
    }
    func encode(to encoder: any Encoder) throws {}
}

/// Reads a nested object, and a member that may be null with `decodeNil`.
private struct NestedDescribed: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "Nested.", recorded: [#"{"inner": {"a": 1}, "maybe": null}"#, #"{"inner": {"a": 1}, "maybe": "x"}"#],
        properties: ["inner": .init("Inner.", schema: "type: object"), "maybe": .init("Maybe.")])
    private enum CodingKeys: String, CodingKey { case inner, maybe }
    private enum InnerKeys: String, CodingKey { case a }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _ = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner).decode(Int.self, forKey: .a)
        if try !container.decodeNil(forKey: .maybe) { _ = try container.decode(String.self, forKey: .maybe) }
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        try inner.encode(1, forKey: .a)
        try container.encodeNil(forKey: .maybe)
    }
}

/// Reads a nested object without notes giving its schema.
private struct NestedRead: DocumentedSchema {
    static let schemaNotes = SchemaNotes("Nested.", recorded: [#"{"inner": {"a": 1}}"#])
    private enum CodingKeys: String, CodingKey { case inner }
    private enum InnerKeys: String, CodingKey { case a }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _ = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner).decode(Int.self, forKey: .a)
    }
    func encode(to encoder: any Encoder) throws {}
}

/// Holds a ``Sample``, which may be null.
private struct Holder: DocumentedSchema {
    var sample: Sample?
    static let schemaNotes = SchemaNotes(
        "Holder.", recorded: [#"{"sample": {"name": "a", "tags": []}}"#], properties: ["sample": .init("A sample.")])
}
