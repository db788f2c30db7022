/// Applying one operation to one field's value: a pure function, shared by client and server.
///
/// An absent field (`nil`) counts as `0` for `increment`, as an empty list for the list operations
/// and as an empty relation for the relation operations. Every operation but `unset` yields a
/// present value, so `relationRemove` on an absent field yields an empty relation of its class.
/// An explicit ``Value/null`` is a value, not an absent field: incrementing it is a `badType`.
///
/// | operation | on | result | errors |
/// |---|---|---|---|
/// | `set(v)` | anything | `v` | — |
/// | `unset` | anything | absent | — |
/// | `increment(n)` | int, double, absent | int + int → int; any double → double | `badType` (field not a number), `illegalArgument` (`n` not a number, int overflow) |
/// | `listAppend`, `listInsert`, `listRemove`, `listMove`, `listReplace` | list, absent | the new list | `badType` (not a list), `badIndex` |
/// | `relationAdd`, `relationRemove` | relation of that class, absent | the new relation | `badType` (not a relation, other class), `illegalArgument` (invalid IDs) |
extension FieldOperation {
    /// Applies this operation to a field's current value and returns the new value.
    ///
    /// The input is never modified; a failing operation only throws.
    ///
    /// ```swift
    /// try FieldOperation.increment(1).apply(to: .int(41))              // .int(42)
    /// try FieldOperation.listInsert(index: 0, value: "a").apply(to: nil) // .list(["a"])
    /// try FieldOperation.unset.apply(to: "x")                           // nil
    /// ```
    ///
    /// - Parameter current: The field's value, `nil` when the field is absent.
    /// - Returns: The new value, `nil` when the field is now absent.
    /// - Throws: ``RooftopError/Code/badType`` when the field holds the wrong kind of value for the
    ///   operation; ``RooftopError/Code/badIndex`` for a list index out of range (`listInsert`
    ///   accepts `0...count`, the others `0..<count`); ``RooftopError/Code/illegalArgument`` for an
    ///   int overflow (numbers never wrap), an increment amount that is not a number, or an invalid
    ///   class name or object ID in a relation operation.
    public func apply(to current: Value?) throws(RooftopError) -> Value? {
        switch self {
        case .set(let value):
            return value
        case .unset:
            return nil
        case .increment(let amount):
            return try Self.add(amount, to: current)
        case .listAppend(let values):
            return .list(try listValue(current) + values)
        case .listInsert(let index, let value):
            var list = try listValue(current)
            try Self.check(index, in: 0...list.count, for: self)
            list.insert(value, at: index)
            return .list(list)
        case .listRemove(let index):
            var list = try listValue(current)
            try Self.check(index, in: 0..<list.count, for: self)
            list.remove(at: index)
            return .list(list)
        case .listMove(let from, let to):
            var list = try listValue(current)
            try Self.check(from, in: 0..<list.count, for: self)
            try Self.check(to, in: 0..<list.count, for: self)
            list.insert(list.remove(at: from), at: to)
            return .list(list)
        case .listReplace(let index, let value):
            var list = try listValue(current)
            try Self.check(index, in: 0..<list.count, for: self)
            list[index] = value
            return .list(list)
        case .relationAdd(let className, let objectIds):
            return .relation(try relationValue(current, className: className, objectIds: objectIds).adding(objectIds))
        case .relationRemove(let className, let objectIds):
            return .relation(try relationValue(current, className: className, objectIds: objectIds).removing(objectIds))
        }
    }

    /// Applies operations in order, starting from `current`.
    /// - Parameters:
    ///   - operations: The operations, first to last.
    ///   - current: The field's value, `nil` when absent.
    /// - Returns: The value after the last operation.
    /// - Throws: The first operation's error, as ``apply(to:)`` describes.
    public static func apply(_ operations: some Sequence<FieldOperation>, to current: Value?) throws(RooftopError)
        -> Value?
    {
        var value = current
        for operation in operations { value = try operation.apply(to: value) }
        return value
    }

    /// Adds a number to a field; int + int stays an int and must not overflow.
    private static func add(_ amount: Value, to current: Value?) throws(RooftopError) -> Value {
        switch (current ?? .int(0), amount) {
        case (.int(let lhs), .int(let rhs)):
            let (sum, overflow) = lhs.addingReportingOverflow(rhs)
            guard !overflow else {
                throw RooftopError(.illegalArgument, "incrementing \(lhs) by \(rhs) overflows a 64-bit int")
            }
            return .int(sum)
        case (.int(let lhs), .double(let rhs)):
            return .double(Double(lhs) + rhs)
        case (.double(let lhs), .int(let rhs)):
            return .double(lhs + Double(rhs))
        case (.double(let lhs), .double(let rhs)):
            return .double(lhs + rhs)
        case (let field, .int), (let field, .double):
            throw RooftopError(.badType, "cannot increment a \(field.typeName): increment needs an int or double field")
        default:
            throw RooftopError(
                .illegalArgument, "an increment amount must be an int or double, not a \(amount.typeName)")
        }
    }

    /// The list a list operation works on; absent counts as empty.
    private func listValue(_ current: Value?) throws(RooftopError) -> [Value] {
        guard let current else { return [] }
        guard case .list(let list) = current else {
            throw RooftopError(.badType, "\(name) needs a list field, not a \(current.typeName)")
        }
        return list
    }

    /// The relation a relation operation works on; absent counts as an empty relation of the
    /// operation's class. Also validates the operation's IDs.
    private func relationValue(_ current: Value?, className: String, objectIds: [String]) throws(RooftopError)
        -> Relation
    {
        try Identifier.validate(className, as: .className)
        for id in objectIds { try Identifier.validate(id, as: .objectId) }
        guard let current else { return Relation(className: className, objectIds: []) }
        guard case .relation(let relation) = current else {
            throw RooftopError(.badType, "\(name) needs a relation field, not a \(current.typeName)")
        }
        guard relation.className == className else {
            throw RooftopError(
                .badType, "\(name) of \(className) objects on a relation to \(relation.className) objects")
        }
        return relation
    }

    private static func check(_ index: Int, in range: Range<Int>, for operation: FieldOperation) throws(RooftopError) {
        guard range.contains(index) else {
            throw RooftopError(
                .badIndex, "\(operation.name) index \(index) is out of range 0..<\(range.upperBound) for this list")
        }
    }

    private static func check(_ index: Int, in range: ClosedRange<Int>, for operation: FieldOperation)
        throws(RooftopError)
    {
        guard range.contains(index) else {
            throw RooftopError(
                .badIndex, "\(operation.name) index \(index) is out of range 0...\(range.upperBound) for this list")
        }
    }
}
