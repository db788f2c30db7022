extension Query {
    /// Checks everything about a query that does not depend on the data, before it is run or
    /// compiled to SQL. Any query that reaches the server's SQL must have passed this.
    ///
    /// It checks:
    /// - the class name and every field name (predicate, order, includes) follow the ID rules
    ///   (``Identifier/isValid(_:)``; built-ins `objectId`, `createdAt`, `updatedAt` are valid
    ///   IDs); `ACL` cannot be queried (the ACL is not a field value);
    /// - `limit` (when set) and `offset` are >= 0;
    /// - the predicate nests at most `maxDepth` levels (see ``QueryPredicate/depth``), there are at
    ///   most ``maxIncludePaths`` include paths and every one has 1 to `maxDepth` fields;
    /// - every `and` and `or` has at least two operands;
    /// - operands fit their operator: `near`'s maximum distance is finite and >= 0, and a box's
    ///   southwest latitude is not above its northeast latitude. (The other operand kinds are
    ///   fixed by the AST's types; the text form checks its parameters when parsing.)
    ///
    /// - Parameter maxDepth: The deepest predicate nesting allowed (default
    ///   ``defaultMaxDepth``, 16).
    /// - Throws: ``RooftopError/Code/invalidQuery`` naming the first problem found, with
    ///   ``RooftopError/field`` set when it is about a field.
    ///
    /// ```swift
    /// try Query("GameScore").where(Field("score") > 100).validate()
    /// ```
    public func validate(maxDepth: Int = Query.defaultMaxDepth) throws(RooftopError) {
        guard Identifier.isValid(className) else {
            throw RooftopError(
                .invalidQuery,
                "invalid class name '\(QueryValidation.shown(className))': use 1-\(Identifier.maxLength) characters of A-Z a-z 0-9 . - _ + / ="
            )
        }
        if let limit, limit < 0 { throw RooftopError(.invalidQuery, "limit must be >= 0, not \(limit)") }
        guard offset >= 0 else { throw RooftopError(.invalidQuery, "offset must be >= 0, not \(offset)") }
        if let predicate {
            let depth = predicate.depth
            guard depth <= maxDepth else {
                throw RooftopError(
                    .invalidQuery, "the predicate nests \(depth) levels deep; at most \(maxDepth) are allowed")
            }
            try QueryValidation.check(predicate)
        }
        for key in order { try QueryValidation.checkField(key.field) }
        try Self.validateIncludes(includes, maxDepth: maxDepth)
    }

    /// The most include paths a query (or a get) may name: 32.
    public static let maxIncludePaths = 32

    /// Checks include paths, of a query or of a single object's get: at most
    /// ``maxIncludePaths`` of them, each of 1 to `maxDepth` valid field names.
    /// - Throws: ``RooftopError/Code/invalidQuery`` naming the first problem found.
    public static func validateIncludes(_ includes: [[String]], maxDepth: Int = defaultMaxDepth) throws(RooftopError) {
        guard includes.count <= maxIncludePaths else {
            throw RooftopError(
                .invalidQuery, "\(includes.count) include paths were given; at most \(maxIncludePaths) are allowed")
        }
        for path in includes {
            guard !path.isEmpty, path.count <= maxDepth else {
                throw RooftopError(
                    .invalidQuery, "an include path needs 1 to \(maxDepth) fields, not \(path.count)")
            }
            for field in path { try QueryValidation.checkField(field) }
        }
    }
}

/// The per-node checks of ``Query/validate(maxDepth:)``.
enum QueryValidation {
    static func check(_ predicate: QueryPredicate) throws(RooftopError) {
        switch predicate {
        case .and(let operands), .or(let operands):
            guard operands.count >= 2 else {
                let name = if case .and = predicate { "and" } else { "or" }
                throw RooftopError(
                    .invalidQuery,
                    "'\(name)' needs at least 2 operands, not \(operands.count); use the operand itself, or no predicate"
                )
            }
            for operand in operands { try check(operand) }
        case .not(let operand):
            try check(operand)
        case .thisIn:
            break
        case .near(let field, _, let maximum):
            try checkField(field)
            if let maximum, !(maximum.isFinite && maximum >= 0) {
                throw RooftopError(
                    .invalidQuery, "'near' needs a maximum distance that is finite and >= 0, not \(maximum)",
                    field: field)
            }
        case .withinBox(let field, let southwest, let northeast):
            try checkField(field)
            guard southwest.latitude <= northeast.latitude else {
                throw RooftopError(
                    .invalidQuery,
                    "'within box' needs the southwest latitude (\(southwest.latitude)) <= the northeast latitude (\(northeast.latitude))",
                    field: field)
            }
        case .comparison(let field, _, _), .in(let field, _), .notIn(let field, _), .exists(let field),
            .notExists(let field), .startsWith(let field, _), .listContains(let field, _),
            .containsAll(let field, _):
            try checkField(field)
        }
    }

    /// Checks a field name: an ID (reserved `:` IDs included), and not `ACL`.
    static func checkField(_ field: String) throws(RooftopError) {
        guard Identifier.isValid(field) else {
            throw RooftopError(
                .invalidQuery,
                "invalid field name '\(shown(field))': use 1-\(Identifier.maxLength) characters of A-Z a-z 0-9 . - _ + / =",
                field: shown(field))
        }
        guard field != "ACL" else {
            throw RooftopError(.invalidQuery, "the ACL cannot be queried", field: field)
        }
    }

    /// A name cut short for messages, so hostile input cannot flood logs.
    static func shown(_ text: String) -> String {
        text.count > 80 ? String(text.prefix(80)) + "…" : text
    }
}
