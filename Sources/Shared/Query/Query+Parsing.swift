extension Query {
    /// Parses the text form of a query (Backbeam's BQL), with `?` standing for parameters.
    ///
    /// Grammar (keywords case-insensitive; clauses optional but in this order):
    /// ```text
    /// query     := ['where' or] ['order' 'by' key (',' key)*] ['limit' count] ['offset' count]
    ///              ['include' path (',' path)*]
    /// or        := and ('or' and)*
    /// and       := unary ('and' unary)*
    /// unary     := 'not' unary | '(' or ')' | 'this' 'in' ? | field condition
    /// condition := ('=' | '!=' | '<' | '<=' | '>' | '>=') operand
    ///            | 'in' ? | 'not' 'in' ? | 'exists' | 'not' 'exists'
    ///            | 'starts' 'with' operand | 'contains' operand | 'contains' 'all' ?
    ///            | 'near' ? ['within' operand 'meters'] | 'within' 'box' ? ?
    /// key       := field ['asc' | 'desc']
    /// path      := field ('.' field)*
    /// count     := integer | ?
    /// operand   := literal | ?
    /// literal   := integer | double | 'string' | true | false | null
    /// field     := [A-Za-z_][A-Za-z0-9_]*  (not a keyword)  |  `any valid ID`
    /// ```
    /// - Integers (`42`, `-7`) are `int`s; numbers with a `.` or an exponent (`1.5`, `2e3`) are
    ///   `double`s. Strings are single-quoted; `''` inside is one quote.
    /// - Field names that are not bare words, or that spell a keyword in any case, go in
    ///   backticks: \`order\`, \`first-name\`, \`a.b\`. Include paths separate fields
    ///   with `.`.
    /// - `and` binds tighter than `or`; parentheses group without changing the tree otherwise
    ///   (`a and (b and c)` is an `and` inside an `and`).
    /// - Parameters are substituted as they are: `in`, `not in` and `contains all` need a `list`;
    ///   `starts with` a `string`; `near` and `within box` `geoPoint`s; `within … meters` an
    ///   `int` or `double`; `this in` a list of object IDs (strings) and pointers, or a relation;
    ///   `limit` and `offset` an `int` >= 0.
    ///
    /// Parsing checks syntax and operand kinds only; call ``validate(maxDepth:)`` before running
    /// a query from an untrusted source.
    ///
    /// - Parameters:
    ///   - className: The class queried.
    ///   - text: The query text; empty for every object.
    ///   - parameters: One value per `?`, in order (default none).
    /// - Throws: ``RooftopError/Code/invalidQuery`` with ``RooftopError/position`` set to the
    ///   0-based offset (in Unicode scalars) of the problem, e.g. "expected an operator after
    ///   'score' at offset 12, found 'abc'" or "3 parameters given but the query has 2 '?'".
    ///
    /// ```swift
    /// let query = try Query.parse(
    ///     className: "GameScore",
    ///     text: "where score > ? and (name = ? or tag in ?) order by score desc, name limit 10",
    ///     parameters: [100, "Sean", ["a", "b"]])
    /// ```
    public static func parse(className: String, text: String, parameters: [Value] = []) throws(RooftopError) -> Query {
        let tokens = try QueryLexer.tokenize(text)
        let marks = tokens.filter { if case .parameter = $0.kind { true } else { false } }
        guard marks.count == parameters.count else {
            let given = parameters.count == 1 ? "1 parameter" : "\(parameters.count) parameters"
            // Point at the first '?' left without a value, or at the end when values are left over.
            let position = marks.count > parameters.count ? marks[parameters.count].position : text.unicodeScalars.count
            throw RooftopError(
                .invalidQuery, "\(given) given but the query has \(marks.count) '?'", position: position)
        }
        var parser = QueryParser(tokens: tokens, parameters: parameters)
        return try parser.parseQuery(className: className)
    }
}
