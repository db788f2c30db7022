import RooftopShared

/// The changes an object offers besides setting fields: numbers, lists and relations. Each is a
/// `FieldUpdate` recorded through ``RooftopObject/apply(_:)``, checked against the object as it
/// reads now.
extension RooftopObject {
    /// Adds `amount` (an int or a double) to a number field; an absent field counts as 0.
    ///
    /// Increments are atomic: increments made concurrently elsewhere all count, unless the
    /// field's merge rule is `local`, `max` or `min` (see `MergeRule`).
    /// - Throws: `badType` when the field holds something other than a number, or `amount` is not
    ///   a number; `illegalArgument` / `invalidOperation` for a bad or built-in field name.
    public func increment(_ field: String, by amount: Value = 1) throws {
        try apply(FieldUpdate(field, .increment(amount)))
    }

    /// Adds a Swift number (`Int`, `Double`, …) to a number field, atomically as the `Value`
    /// overload does.
    /// - Throws: `badType` when the field holds something other than a number (or the amount is
    ///   no number: a `Decimal`); `illegalArgument` / `invalidOperation` for a bad or built-in name.
    public func increment<T: Numeric & ValueConvertible>(_ field: String, by amount: T) throws {
        try increment(field, by: amount.rooftopValue)
    }

    /// Appends values to a list field.
    public func append(_ values: Value..., to field: String) throws {
        try apply(FieldUpdate(field, .listAppend(values)))
    }

    /// Appends Swift values (`String`s, `Date`s, …) to a list field.
    ///
    /// ```swift
    /// try object.append(contentsOf: newTags, to: "tags")
    /// ```
    public func append<S: Sequence>(contentsOf values: S, to field: String) throws
    where S.Element: ValueConvertible {
        try apply(FieldUpdate(field, .listAppend(values.map(\.rooftopValue))))
    }

    /// Inserts a value into a list field.
    public func insert(_ value: Value, at index: Int, in field: String) throws {
        try apply(FieldUpdate(field, .listInsert(index: index, value: value)))
    }

    /// Inserts a Swift value into a list field.
    public func insert(_ value: some ValueConvertible, at index: Int, in field: String) throws {
        try insert(value.rooftopValue, at: index, in: field)
    }

    /// Removes the element at an index of a list field.
    public func remove(at index: Int, from field: String) throws {
        try apply(FieldUpdate(field, .listRemove(index: index)))
    }

    /// Moves an element of a list field.
    public func move(from source: Int, to destination: Int, in field: String) throws {
        try apply(FieldUpdate(field, .listMove(from: source, to: destination)))
    }

    /// Replaces the element at an index of a list field.
    public func replace(at index: Int, with value: Value, in field: String) throws {
        try apply(FieldUpdate(field, .listReplace(index: index, value: value)))
    }

    /// Replaces the element at an index of a list field with a Swift value.
    public func replace(at index: Int, with value: some ValueConvertible, in field: String) throws {
        try replace(at: index, with: value.rooftopValue, in: field)
    }

    /// Adds objects to a relation field.
    public func addRelation(_ objects: [RooftopObject], to field: String) throws {
        guard let className = objects.first?.className else { return }
        try apply(FieldUpdate(field, .relationAdd(className: className, objectIds: objects.map(\.objectId))))
    }

    /// Removes objects from a relation field.
    public func removeRelation(_ objects: [RooftopObject], from field: String) throws {
        guard let className = objects.first?.className else { return }
        try apply(FieldUpdate(field, .relationRemove(className: className, objectIds: objects.map(\.objectId))))
    }
}
