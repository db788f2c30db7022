/// Applying field updates to an object's fields: validation of field names, then the operations.
extension FieldUpdate {
    /// Checks that an app may write a field with this name.
    ///
    /// ```swift
    /// try FieldUpdate.validateField("score")      // ok
    /// try FieldUpdate.validateField("createdAt")  // throws invalidOperation
    /// ```
    ///
    /// - Parameter name: The field's name.
    /// - Throws: ``RooftopError/Code/illegalArgument`` when the name breaks the ID rules or is
    ///   reserved (starts with `:`); ``RooftopError/Code/invalidOperation`` for a built-in field
    ///   (``Identifier/builtInFields``: `objectId`, `createdAt`, `updatedAt`, `ACL`), which only
    ///   Rooftop itself sets.
    public static func validateField(_ name: String) throws(RooftopError) {
        try Identifier.validate(name, as: .field)
        guard !Identifier.builtInFields.contains(name) else {
            throw RooftopError(
                .invalidOperation, "'\(name)' is a built-in field and cannot be changed by a field operation",
                field: name)
        }
    }

    /// Applies this update to a field dictionary and returns the new dictionary.
    ///
    /// ```swift
    /// try FieldUpdate("score", .increment(1)).apply(to: ["score": 1])   // ["score": 2]
    /// ```
    ///
    /// - Parameter fields: The object's fields, by name (built-in fields are not in here).
    /// - Returns: A copy with the field changed (removed when the operation leaves it absent).
    /// - Throws: What ``validateField(_:)`` and ``FieldOperation/apply(to:)`` throw, with
    ///   ``RooftopError/field`` set to this field's name.
    public func apply(to fields: [String: Value]) throws(RooftopError) -> [String: Value] {
        var result = fields
        result[field] = try newValue(in: fields)
        return result
    }

    /// Applies updates in order to a field dictionary: all of them or, on the first error, none.
    ///
    /// ```swift
    /// let fields = try FieldUpdate.apply(
    ///     [FieldUpdate("score", .increment(10)), FieldUpdate("tags", .listAppend(["new"]))],
    ///     to: ["score": 5])
    /// // ["score": 15, "tags": ["new"]]
    /// ```
    ///
    /// - Parameters:
    ///   - updates: The updates, first to last.
    ///   - fields: The fields before the updates.
    /// - Returns: The fields after the last update.
    /// - Throws: The first failing update's error (see ``apply(to:)``); the input is unchanged.
    public static func apply(_ updates: some Sequence<FieldUpdate>, to fields: [String: Value]) throws(RooftopError)
        -> [String: Value]
    {
        // A local copy: the caller's dictionary is untouched whatever happens.
        var result = fields
        for update in updates { result[update.field] = try update.newValue(in: result) }
        return result
    }

    /// The field's value after this update, with the field name attached to any error.
    private func newValue(in fields: [String: Value]) throws(RooftopError) -> Value? {
        do throws(RooftopError) {
            try Self.validateField(field)
            return try operation.apply(to: fields[field])
        } catch {
            var error = error
            if error.field == nil { error.field = field }
            throw error
        }
    }
}
