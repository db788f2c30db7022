/// Builder methods: each returns a refined copy, so queries can be built in one expression.
extension Query {
    /// Adds a condition; a query that already has one gets both (`existing && predicate`).
    ///
    /// ```swift
    /// var query = Query("GameScore").where(Field("score") > 100)
    /// if let name { query = query.where(Field("name") == .string(name)) }
    /// ```
    public func `where`(_ predicate: QueryPredicate) -> Query {
        var copy = self
        copy.predicate = self.predicate.map { $0 && predicate } ?? predicate
        return copy
    }

    /// Adds a sort key after the existing ones.
    /// - Parameters:
    ///   - field: The field to sort on.
    ///   - descending: Whether larger values come first (default `false`).
    public func order(by field: String, descending: Bool = false) -> Query {
        var copy = self
        copy.order.append(QueryOrder(field, descending: descending))
        return copy
    }

    /// Sets the most results to return (must be >= 0, checked by ``validate(maxDepth:)``).
    public func limit(_ limit: Int) -> Query {
        var copy = self
        copy.limit = limit
        return copy
    }

    /// Sets how many ordered results to skip (must be >= 0, checked by ``validate(maxDepth:)``).
    public func offset(_ offset: Int) -> Query {
        var copy = self
        copy.offset = offset
        return copy
    }

    /// Adds a pointer path to include: each argument is one field of the path, so
    /// `including("author", "company")` includes each result's author and the author's company.
    /// Field names may contain `.`, so a path is never split on dots.
    public func including(_ field: String, _ path: String...) -> Query {
        var copy = self
        copy.includes.append([field] + path)
        return copy
    }
}
