/// One change to one field: what travels in a push and what merge rules act on.
///
/// Changes are operations, not whole values, so that concurrent changes can be merged: two
/// increments both count, two list inserts both land (the Dropbox Datastore API's conflict-free lists).
///
/// Wire form: `{"op": "set", "value": 3}`, `{"op": "unset"}`, `{"op": "increment", "amount": 1}`,
/// `{"op": "listAppend", "values": [...]}`, `{"op": "listInsert", "index": 0, "value": ...}`,
/// `{"op": "listRemove", "index": 2}`, `{"op": "listMove", "from": 0, "to": 3}`,
/// `{"op": "listReplace", "index": 1, "value": ...}`,
/// `{"op": "relationAdd", "className": "User", "objectIds": [...]}`,
/// `{"op": "relationRemove", "className": "User", "objectIds": [...]}`.
public enum FieldOperation: Hashable, Sendable {
    /// Sets the field to a value.
    case set(Value)
    /// Removes the field.
    case unset
    /// Adds an `int` or `double` amount to a number field (an absent field counts as 0).
    case increment(Value)
    /// Appends values at the end of a list field (an absent field counts as an empty list).
    case listAppend([Value])
    /// Inserts a value at an index, `0...count`, moving later elements back.
    case listInsert(index: Int, value: Value)
    /// Removes the element at an index.
    case listRemove(index: Int)
    /// Moves the element at `from` so that it ends up at index `to`.
    case listMove(from: Int, to: Int)
    /// Replaces the element at an index.
    case listReplace(index: Int, value: Value)
    /// Adds objects to a relation field (an absent field counts as an empty relation).
    case relationAdd(className: String, objectIds: [String])
    /// Removes objects from a relation field.
    case relationRemove(className: String, objectIds: [String])

    /// The operation's wire name, e.g. `listInsert`.
    public var name: String {
        switch self {
        case .set: "set"
        case .unset: "unset"
        case .increment: "increment"
        case .listAppend: "listAppend"
        case .listInsert: "listInsert"
        case .listRemove: "listRemove"
        case .listMove: "listMove"
        case .listReplace: "listReplace"
        case .relationAdd: "relationAdd"
        case .relationRemove: "relationRemove"
        }
    }

    /// Whether this is one of the list operations (append, insert, remove, move, replace).
    public var isListOperation: Bool {
        switch self {
        case .listAppend, .listInsert, .listRemove, .listMove, .listReplace: true
        default: false
        }
    }

    /// The values this operation carries (for size accounting and validation).
    public var values: [Value] {
        switch self {
        case .set(let value), .increment(let value), .listInsert(_, let value), .listReplace(_, let value):
            [value]
        case .listAppend(let values):
            values
        case .unset, .listRemove, .listMove, .relationAdd, .relationRemove:
            []
        }
    }
}

extension FieldOperation: Codable {
    private enum CodingKeys: String, CodingKey {
        case op, value, amount, values, index, from, to, className, objectIds
    }

    /// The members each operation has besides `op`.
    private static let members: [String: [String]] = [
        "set": ["value"], "unset": [], "increment": ["amount"], "listAppend": ["values"],
        "listInsert": ["index", "value"], "listRemove": ["index"], "listMove": ["from", "to"],
        "listReplace": ["index", "value"], "relationAdd": ["className", "objectIds"],
        "relationRemove": ["className", "objectIds"],
    ]

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for an unknown `op`, a missing member, or a member the operation
    ///   does not have. (A list position out of range, negative ones included, is refused when the
    ///   operation is applied, with `badIndex`.)
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let op = try container.decode(String.self, forKey: .op)
        if let members = FieldOperation.members[op] {
            try rejectUnknownKeys(decoder, allowed: ["op"] + members, in: "'\(op)' operation")
        }
        switch op {
        case "set": self = .set(try container.decode(Value.self, forKey: .value))
        case "unset": self = .unset
        case "increment": self = .increment(try container.decode(Value.self, forKey: .amount))
        case "listAppend": self = .listAppend(try container.decode([Value].self, forKey: .values))
        case "listInsert":
            self = .listInsert(
                index: try container.decode(Int.self, forKey: .index),
                value: try container.decode(Value.self, forKey: .value))
        case "listRemove": self = .listRemove(index: try container.decode(Int.self, forKey: .index))
        case "listMove":
            self = .listMove(
                from: try container.decode(Int.self, forKey: .from), to: try container.decode(Int.self, forKey: .to))
        case "listReplace":
            self = .listReplace(
                index: try container.decode(Int.self, forKey: .index),
                value: try container.decode(Value.self, forKey: .value))
        case "relationAdd", "relationRemove":
            let className = try container.decode(String.self, forKey: .className)
            let objectIds = try container.decode([String].self, forKey: .objectIds)
            if let bad = ([className] + objectIds).first(where: { !Identifier.isValid($0) }) {
                throw DecodingError.dataCorruptedError(
                    forKey: .objectIds, in: container,
                    debugDescription:
                        "invalid ID '\(bad.prefix(80))': use 1-\(Identifier.maxLength) characters of A-Z a-z 0-9 . - _ + / =")
            }
            self =
                op == "relationAdd"
                ? .relationAdd(className: className, objectIds: objectIds)
                : .relationRemove(className: className, objectIds: objectIds)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .op, in: container,
                debugDescription:
                    "unknown operation '\(op)': use set, unset, increment, listAppend, listInsert, listRemove, listMove, listReplace, relationAdd or relationRemove"
            )
        }
    }

    /// Encodes the wire form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .op)
        switch self {
        case .set(let value): try container.encode(value, forKey: .value)
        case .unset: break
        case .increment(let amount): try container.encode(amount, forKey: .amount)
        case .listAppend(let values): try container.encode(values, forKey: .values)
        case .listInsert(let index, let value), .listReplace(let index, let value):
            try container.encode(index, forKey: .index)
            try container.encode(value, forKey: .value)
        case .listRemove(let index): try container.encode(index, forKey: .index)
        case .listMove(let from, let to):
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
        case .relationAdd(let className, let objectIds), .relationRemove(let className, let objectIds):
            try container.encode(className, forKey: .className)
            try container.encode(objectIds, forKey: .objectIds)
        }
    }
}

/// An operation on a named field.
public struct FieldUpdate: Hashable, Sendable, Codable {
    /// The field's name.
    public var field: String
    /// What to do to it.
    public var operation: FieldOperation

    /// Creates an update.
    public init(_ field: String, _ operation: FieldOperation) {
        self.field = field
        self.operation = operation
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case field, operation = "do" }

    /// Decodes `{"field": ..., "do": {...}}`, refusing unknown keys.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "field update")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let field = try container.decode(String.self, forKey: .field)
        // Whether the field may be written (reserved and built-in names) is the write's rule.
        guard Identifier.isValid(field) else {
            throw DecodingError.dataCorruptedError(
                forKey: .field, in: container,
                debugDescription:
                    "invalid field name '\(field.prefix(80))': use 1-\(Identifier.maxLength) characters of A-Z a-z 0-9 . - _ + / =")
        }
        self.init(field, try container.decode(FieldOperation.self, forKey: .operation))
    }
}

/// A change to a whole object: field updates (which create the object when it does not exist) or
/// its deletion.
///
/// Wire form: `{"fields": {"name": "Ada", "score": 3}, "update": [{"field": "score", "do": {"op":
/// "increment", "amount": 1}}], "acl": {...}}` or `{"delete": true}`. `fields` holds plain values
/// to set (as the REST body's `fields` does): they apply first, in name order, then the operations
/// of `update`. Both are optional. Encoding writes the leading sets in name order as `fields`, so
/// that a creation travels as plain JSON rather than one operation per field.
public enum ObjectChange: Hashable, Sendable {
    /// Applies the updates in order; sets the ACL when one is given.
    case update([FieldUpdate], acl: ACL? = nil)
    /// Deletes the object.
    case delete

    /// The field updates (empty for a delete).
    public var updates: [FieldUpdate] {
        if case .update(let updates, _) = self { updates } else { [] }
    }

    /// The updates that plain `fields` and then operations make: the fields as sets, in name
    /// order (a JSON object's member order means nothing), then the operations. The REST body and
    /// the push's wire form both read `fields` this way.
    /// - Parameters:
    ///   - fields: Plain values to set (default none).
    ///   - operations: Operations applied after them (default none).
    public static func updates(fields: [String: Value]?, then operations: [FieldUpdate]?) -> [FieldUpdate] {
        let sets = (fields ?? [:]).sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
        return sets + (operations ?? [])
    }

    /// An update whose leading sets of distinct fields are put in name order.
    ///
    /// Sets of different fields commute, so the change means the same; in name order they travel
    /// as the wire form's plain `fields` (a new object's fields are usually such a run). Later
    /// updates keep their order.
    ///
    /// ```swift
    /// let change = ObjectChange.update(ordering: [FieldUpdate("name", .set("Ada")), FieldUpdate("age", .set(36))])
    /// // .update([age, name]): encoded as {"fields": {"age": 36, "name": "Ada"}}
    /// ```
    public static func update(ordering updates: [FieldUpdate], acl: ACL? = nil) -> ObjectChange {
        var seen: Set<String> = []
        let run = updates.prefix { update in
            guard case .set = update.operation else { return false }
            return seen.insert(update.field).inserted
        }
        return .update(run.sorted { $0.field < $1.field } + updates.dropFirst(run.count), acl: acl)
    }

    /// How many leading updates are sets of fields in strictly increasing name order: the part
    /// the wire form writes as plain `fields` (decoding gives them back in the same order).
    static func plainPrefixCount(_ updates: [FieldUpdate]) -> Int {
        var previous: String?
        var count = 0
        for update in updates {
            guard case .set = update.operation, previous.map({ $0 < update.field }) ?? true else { break }
            previous = update.field
            count += 1
        }
        return count
    }
}

extension ObjectChange: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case fields, update, acl, delete }

    /// Decodes the wire form, refusing unknown keys.
    /// - Throws: `DecodingError` for an unknown key, a delete combined with anything else, or a
    ///   field name in `fields` that is not an identifier.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "object change")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.delete) {
            // Only `true` is a delete: `false` or `null` would silently turn into an empty update.
            guard try container.decodeIfPresent(Bool.self, forKey: .delete) == true else {
                throw DecodingError.dataCorruptedError(
                    forKey: .delete, in: container, debugDescription: "delete must be true when present")
            }
            guard !container.contains(.update), !container.contains(.acl), !container.contains(.fields) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .delete, in: container, debugDescription: "a delete cannot also update")
            }
            self = .delete
        } else {
            let fields = try container.decodeIfPresent([String: Value].self, forKey: .fields)
            // Whether the field may be written (reserved and built-in names) is the write's rule,
            // as for `FieldUpdate`.
            if let bad = fields?.keys.first(where: { !Identifier.isValid($0) }) {
                throw DecodingError.dataCorruptedError(
                    forKey: .fields, in: container,
                    debugDescription:
                        "invalid field name '\(bad.prefix(80))': use 1-\(Identifier.maxLength) characters of A-Z a-z 0-9 . - _ + / =")
            }
            self = .update(
                ObjectChange.updates(
                    fields: fields, then: try container.decodeIfPresent([FieldUpdate].self, forKey: .update)),
                acl: try container.decodeIfPresent(ACL.self, forKey: .acl))
        }
    }

    /// Encodes the wire form: the leading sets in name order as `fields`, the rest as `update`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .delete:
            try container.encode(true, forKey: .delete)
        case .update(let updates, let acl):
            let plain = ObjectChange.plainPrefixCount(updates)
            if plain > 0 {
                var fields: [String: Value] = [:]
                for update in updates.prefix(plain) {
                    if case .set(let value) = update.operation { fields[update.field] = value }
                }
                try container.encode(fields, forKey: .fields)
            }
            if plain == 0 || plain < updates.count {
                try container.encode(Array(updates.dropFirst(plain)), forKey: .update)
            }
            try container.encodeIfPresent(acl, forKey: .acl)
        }
    }
}
