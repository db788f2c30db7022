import Foundation
import RooftopShared
import Yams

extension SchemaBuilder {
    /// What is recorded of one object schema (a ``DocumentedSchema`` type, or one variant of a
    /// ``UnionSchema``): its members and the schema of each.
    struct Recording {
        /// The component's name.
        var name: String
        /// The type whose coding is recorded: the documented type, or the variant's union.
        var type: any Codable.Type
        /// Whether this is a variant of the union ``type``.
        var isVariant: Bool
        /// The description, examples and member notes.
        var notes: SchemaNotes
        /// The members, in the order the type writes them for the fullest example (then any it
        /// reads but did not write there, in the order it reads them).
        var members: [SchemaRecorder.Member]
        /// The values each constant member takes in the examples, in the order they show them.
        var constants: [String: [String]]
        /// Each member's name and schema, in the same order: `null` among the values of those
        /// the type takes it for (what a request may send; an answer's schema leaves it out).
        var properties: [(name: Node, schema: Node)]
        /// The examples shown, as nodes.
        var examples: [Node]

        /// The recording of a documented type.
        /// - Throws: ``SchemaRecorder/Failure`` naming the type.
        init(_ type: any DocumentedSchema.Type) throws {
            do {
                try self.init(name: type.schemaName, type: type, notes: type.schemaNotes)
            } catch {
                throw SchemaRecorder.Failure(description: "the schema of \(type.schemaName): \(error)")
            }
        }

        /// The recording of one variant of `union`: its examples decoded by the union, each
        /// required to be this variant; its required members found by taking each away.
        /// - Throws: ``SchemaRecorder/Failure`` naming the variant.
        init(variant: VariantNotes, of union: any UnionSchema.Type) throws {
            do {
                var constants = variant.constants
                if let discriminator = union.unionNotes.discriminator { constants.insert(discriminator, at: 0) }
                try self.init(name: variant.name, type: union, notes: variant.notes, variant: true, constants: constants)
            } catch {
                throw SchemaRecorder.Failure(description: "the schema of \(variant.name): \(error)")
            }
        }

        /// The recording of `type` under `name`, from its notes' examples; for a variant (`type`
        /// is then its union), each example must decode as variant `name`, and `constants` are
        /// the members whose values the examples show all of.
        /// - Throws: ``SchemaRecorder/Failure`` (not naming `name`: the callers do).
        private init(
            name: String, type: any Codable.Type, notes: SchemaNotes, variant: Bool = false, constants: [String] = []
        ) throws {
            let values = notes.examples + notes.recorded
            guard !values.isEmpty else { throw SchemaRecorder.Failure(description: "no example to record") }
            var members: [SchemaRecorder.Member] = []
            var order: [String] = []
            for example in values {
                let (read, value) = try SchemaRecorder.record(type, example: example)
                if variant {
                    let decoded = try Self.variant(of: value)
                    guard decoded == name else {
                        throw SchemaRecorder.Failure(description: "an example decodes as \(decoded): \(example)")
                    }
                }
                if let encodable = value as? any Encodable {
                    let written = try SchemaRecorder.writtenKeys(of: encodable)
                    if written.count > order.count { order = written }
                }
                for member in read {
                    if let index = members.firstIndex(where: { $0.name == member.name }) {
                        members[index].merge(member)
                    } else {
                        members.append(member)
                    }
                }
            }
            if variant {
                var held: Set<String> = []
                for value in values {
                    if let object = try JSONSerialization.jsonObject(with: Data(value.utf8)) as? [String: Any] {
                        held.formUnion(object.keys)
                    }
                }
                if let unheld = members.first(where: { !held.contains($0.name) }) {
                    // A union's decoder that tries a branch and falls back reads what it then
                    // does without: that is no member of the variant.
                    throw SchemaRecorder.Failure(description: "'\(unheld.name)' is read but no example holds it")
                }
                // A union's decoder asks `contains` to pick its branch: what the variant needs is
                // what it cannot decode as itself without.
                for index in members.indices {
                    members[index].required = try Self.needed(members[index].name, by: name, of: type, in: values)
                }
            }
            for stray in notes.properties.keys.sorted() + constants where !members.contains(where: { $0.name == stray }) {
                throw SchemaRecorder.Failure(description: "the notes describe '\(stray)', which the type does not read")
            }
            var shown: [String: [String]] = [:]
            for constant in constants {
                shown[constant] = try Self.values(of: constant, in: values, members: members)
            }
            let rank = { (name: String) in order.firstIndex(of: name) ?? order.count }
            self.name = name
            self.type = type
            isVariant = variant
            self.notes = notes
            self.constants = shown
            self.members = members.enumerated()
                .sorted { (rank($0.element.name), $0.offset) < (rank($1.element.name), $1.offset) }
                .map(\.element)
            properties = try self.members.map { member in
                (text(member.name), try Self.schema(of: member, notes: notes, constants: shown, nullable: member.acceptsNull))
            }
            examples = try notes.examples.map(json)
        }

        /// A member's schema: its constant values when it is one, else its type's with its note,
        /// taking `null` when `nullable`.
        private static func schema(
            of member: SchemaRecorder.Member, notes: SchemaNotes, constants: [String: [String]], nullable: Bool
        ) throws -> Node {
            let note = notes.properties[member.name] ?? PropertyNote()
            if let values = constants[member.name] { return try SchemaBuilder.constant(member.name, values, note) }
            return try SchemaBuilder.property(member, note, nullable: nullable)
        }

        /// Whether variant `name` of `union` needs member `member`: every value holds it, and none
        /// decodes as that variant without it.
        private static func needed(_ member: String, by name: String, of union: any Codable.Type, in values: [String]) throws -> Bool {
            for value in values {
                guard var object = try JSONSerialization.jsonObject(with: Data(value.utf8)) as? [String: Any],
                    object.removeValue(forKey: member) != nil
                else { return false }
                let without = try JSONSerialization.data(withJSONObject: object)
                // A value that no longer decodes needs the member: the error is the answer.
                if let decoded = try? JSONDecoder().decode(union, from: without), try variant(of: decoded) == name {
                    return false
                }
            }
            return true
        }

        /// The variant a union's value is.
        /// - Throws: ``SchemaRecorder/Failure`` when the value is no ``UnionSchema``'s.
        static func variant(of value: Any) throws -> String {
            guard let union = value as? any UnionSchema else {
                throw SchemaRecorder.Failure(description: "\(Swift.type(of: value)) is not a union")
            }
            return union.schemaVariant
        }

        /// The values `constant` takes in `values`, each a string, in order, without repeats.
        private static func values(of constant: String, in values: [String], members: [SchemaRecorder.Member]) throws -> [String] {
            guard members.first(where: { $0.name == constant })?.type == String.self else {
                throw SchemaRecorder.Failure(description: "the constant '\(constant)' is not read as a String")
            }
            var shown: [String] = []
            for value in values {
                let object = try JSONSerialization.jsonObject(with: Data(value.utf8)) as? [String: Any]
                guard let string = object?[constant] as? String else {
                    throw SchemaRecorder.Failure(description: "an example has no string '\(constant)': \(value)")
                }
                if !shown.contains(string) { shown.append(string) }
            }
            return shown
        }

        /// The schema; when `answerOnly`, what the encoder always writes is required too, and
        /// `null` is no member's value.
        /// - Throws: ``SchemaRecorder/Failure`` when working out what the encoder always writes fails.
        func node(answerOnly: Bool) throws -> Node {
            var pairs: [(Node, Node)] = [
                (text("type"), text("object")),
                (text("description"), text(notes.description)),
            ]
            var required = Set(members.filter(\.required).map(\.name))
            if answerOnly {
                required.formUnion(
                    try SchemaRecorder.alwaysWritten(
                        type, examples: notes.examples + notes.recorded, required: Array(required),
                        variant: isVariant ? name : nil))
            }
            let listed = members.filter { required.contains($0.name) }.map { text($0.name) }
            if !listed.isEmpty { pairs.append((text("required"), .sequence(.init(listed)))) }
            // An answer's encoder leaves out what a value lacks: no member holds `null` there.
            let schemas = try zip(members, properties).map { member, property in
                guard answerOnly, member.acceptsNull else { return property }
                return (property.name, try Self.schema(of: member, notes: notes, constants: constants, nullable: false))
            }
            pairs.append((text("properties"), .mapping(.init(schemas.map { ($0.name, $0.schema) }))))
            pairs.append((text("additionalProperties"), Node("false")))
            if !examples.isEmpty { pairs.append((text("examples"), .sequence(.init(examples)))) }
            return .mapping(.init(pairs))
        }
    }

    /// The schema of a string member that takes only `values`: a `const` for one, an `enum` for
    /// more, with its note's description.
    /// - Throws: ``SchemaRecorder/Failure`` when the note says more than a description: a
    ///   constant's schema is its values.
    fileprivate static func constant(_ name: String, _ values: [String], _ note: PropertyNote) throws -> Node {
        guard note.reference == nil, note.items == nil, note.schema == nil, note.constraints.isEmpty else {
            throw SchemaRecorder.Failure(description: "the constant '\(name)' has a note beyond its description")
        }
        var pairs: [(Node, Node)] = [(text("type"), text("string"))]
        if values.count == 1 {
            pairs.append((text("const"), text(values[0])))
        } else {
            pairs.append((text("enum"), .sequence(.init(values.map(text)))))
        }
        if let description = note.description { pairs.append((text("description"), text(description))) }
        return .mapping(.init(pairs))
    }
}
