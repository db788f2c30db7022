/// Checks what a client asks to write before it is applied: names, IDs and values.
///
/// Both sides run it: the client before queueing a change (so a bad change fails at once, not
/// at the server hours later) and the server on every mutation it receives. It checks:
///
/// - class names, object IDs and field names follow the ``Identifier`` rules and are not
///   reserved (`:`-prefixed); built-in fields (`objectId`, `createdAt`, `updatedAt`, `ACL`)
///   cannot be written through field operations (``RooftopError/Code/invalidOperation``);
/// - values nest at most ``Limits/maxNestingDepth`` levels (``RooftopError/Code/sizeLimit``);
///   a value put into a list counts the list's own level;
/// - pointer and relation targets name a valid class and valid object IDs;
/// - an increment amount is an `int` or a `double` (``RooftopError/Code/badType``), list indices
///   are not negative (``RooftopError/Code/badIndex``), a base version is not negative.
///
/// Sizes are not checked here: a record's size is known only after the change is merged
/// (``Limits/checkRecord(_:)``), and a push's as a whole (``Limits/checkPush(_:)``).
///
/// ```swift
/// let validator = WriteValidator(limits: serverInfo.limits)
/// try validator.validate(mutation)
/// ```
public struct WriteValidator: Sendable {
    /// The limits to enforce.
    public var limits: Limits

    /// Creates a validator.
    /// - Parameter limits: The limits (default ``Limits/default``).
    public init(limits: Limits = .default) {
        self.limits = limits
    }

    /// Checks a whole mutation: its class, object ID, base version and change.
    /// - Throws: ``RooftopError`` with the code of the first rule broken.
    public func validate(_ mutation: Mutation) throws(RooftopError) {
        try Identifier.validate(mutation.className, as: .className)
        try Identifier.validate(mutation.objectId, as: .objectId)
        if let baseVersion = mutation.baseVersion, baseVersion < 0 {
            throw RooftopError(.illegalArgument, "base version \(baseVersion) is negative", field: "baseVersion")
        }
        try validate(mutation.change)
    }

    /// Checks every field update of a change (a delete has none).
    /// - Throws: ``RooftopError`` with the code of the first rule broken.
    public func validate(_ change: ObjectChange) throws(RooftopError) {
        for update in change.updates { try validate(update) }
    }

    /// Checks one field update: the field name, then the operation's values and arguments.
    /// - Throws: ``RooftopError`` with the code of the first rule broken.
    public func validate(_ update: FieldUpdate) throws(RooftopError) {
        let field = update.field
        try Identifier.validate(field, as: .field)
        if Identifier.builtInFields.contains(field) {
            throw RooftopError(
                .invalidOperation, "field '\(field)' is built in and cannot be written by field operations",
                field: field)
        }
        switch update.operation {
        case .set(let value):
            try validate(value, field: field)
        case .unset:
            break
        case .increment(let amount):
            guard amount.kind == .number else {
                throw RooftopError(
                    .badType, "an increment amount must be an int or a double, not \(amount.typeName)", field: field)
            }
        case .listAppend(let values):
            for value in values { try validate(value, field: field, depth: 1) }
        case .listInsert(let index, let value), .listReplace(let index, let value):
            try checkIndex(index, field: field)
            try validate(value, field: field, depth: 1)
        case .listRemove(let index):
            try checkIndex(index, field: field)
        case .listMove(let from, let to):
            try checkIndex(from, field: field)
            try checkIndex(to, field: field)
        case .relationAdd(let className, let objectIds), .relationRemove(let className, let objectIds):
            try validateTarget(className: className, objectIds: objectIds, field: field)
        }
    }

    /// Checks a value written to a field: nesting depth and reference targets.
    /// - Parameters:
    ///   - value: The value.
    ///   - field: The field's name, for messages.
    /// - Throws: ``RooftopError/Code/sizeLimit`` for a value nested too deeply,
    ///   ``RooftopError/Code/illegalArgument`` for an invalid pointer or relation target.
    public func validate(_ value: Value, field: String) throws(RooftopError) {
        try validate(value, field: field, depth: 0)
    }

    /// The nesting depth of a value: 0 for a scalar, 1 + the deepest element for a list, the
    /// JSON depth (``JSONValue/depth``) for `json`.
    public static func depth(of value: Value) -> Int {
        switch value {
        case .list(let items): 1 + (items.map(depth(of:)).max() ?? 0)
        case .json(let json): json.depth
        default: 0
        }
    }

    /// Validates `value` found `depth` levels down inside the field's value.
    private func validate(_ value: Value, field: String, depth: Int) throws(RooftopError) {
        let total = depth + WriteValidator.depth(of: value)
        if total > limits.maxNestingDepth {
            throw RooftopError(
                .sizeLimit, "field '\(field)' nests \(total) levels deep; the limit is \(limits.maxNestingDepth)",
                field: field)
        }
        try checkReferences(value, field: field)
    }

    private func checkReferences(_ value: Value, field: String) throws(RooftopError) {
        switch value {
        case .pointer(let pointer):
            try validateTarget(className: pointer.className, objectIds: [pointer.objectId], field: field)
        case .relation(let relation):
            try validateTarget(className: relation.className, objectIds: relation.objectIds, field: field)
        case .list(let items):
            for item in items { try checkReferences(item, field: field) }
        default:
            break
        }
    }

    private func validateTarget(className: String, objectIds: [String], field: String) throws(RooftopError) {
        do {
            try Identifier.validate(className, as: .className)
            for objectId in objectIds { try Identifier.validate(objectId, as: .objectId) }
        } catch {
            throw RooftopError(
                .illegalArgument, "field '\(field)' refers to an invalid target: \(error.message)", field: field)
        }
    }

    private func checkIndex(_ index: Int, field: String) throws(RooftopError) {
        if index < 0 {
            throw RooftopError(.badIndex, "list index \(index) is negative", field: field)
        }
    }
}
