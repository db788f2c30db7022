/// A query in text form: BQL text with `?` marks and one parameter per mark.
///
/// ```swift
/// let form = try Query("GameScore").where(Field("score") > 100).textForm
/// // form.text == "where score > 100", form.parameters == []
/// ```
public struct QueryText: Hashable, Sendable {
    /// The text, e.g. `where score > 100 and tag in ? order by score desc`.
    public var text: String
    /// The values of the `?` marks, in order.
    public var parameters: [Value]

    /// Creates a text form.
    /// - Parameters:
    ///   - text: The query text.
    ///   - parameters: The values of its `?` marks (default none).
    public init(text: String, parameters: [Value] = []) {
        self.text = text
        self.parameters = parameters
    }
}

extension Query {
    /// This query in the text form (see ``parse(className:text:parameters:)``), such that parsing
    /// it back gives an equal query: `try Query.parse(className: q.className, text: t.text,
    /// parameters: t.parameters) == q`.
    ///
    /// Nulls, bools, ints, strings and finite doubles are written as literals; every other value
    /// (and every list, point and `this in` collection) becomes a `?` parameter. Field names are
    /// backticked when they are not bare words or spell a keyword. `not` always takes parentheses,
    /// as do `and`s and `or`s inside other `and`s and `or`s, so the tree is kept exactly.
    ///
    /// - Throws: the ``RooftopError/Code/invalidQuery`` error of ``validate(maxDepth:)`` when the
    ///   query is not valid (any depth is accepted): an invalid name or an `and`/`or` with fewer
    ///   than two operands has no text that parses back to the same query.
    public var textForm: QueryText {
        get throws(RooftopError) {
            try validate(maxDepth: .max)
            var renderer = QueryTextRenderer()
            return renderer.render(self)
        }
    }
}

/// Writes queries as text, collecting parameters.
struct QueryTextRenderer {
    private var parameters: [Value] = []

    mutating func render(_ query: Query) -> QueryText {
        var clauses: [String] = []
        if let predicate = query.predicate { clauses.append("where " + expression(predicate)) }
        if !query.order.isEmpty {
            let keys = query.order.map { name($0.field) + ($0.descending ? " desc" : "") }
            clauses.append("order by " + keys.joined(separator: ", "))
        }
        if let limit = query.limit { clauses.append("limit \(limit)") }
        if query.offset != 0 { clauses.append("offset \(query.offset)") }
        if !query.includes.isEmpty {
            let paths = query.includes.map { $0.map(name).joined(separator: ".") }
            clauses.append("include " + paths.joined(separator: ", "))
        }
        return QueryText(text: clauses.joined(separator: " "), parameters: parameters)
    }

    private mutating func expression(_ predicate: QueryPredicate) -> String {
        switch predicate {
        case .and(let operands): return operands.map { grouped($0) }.joined(separator: " and ")
        case .or(let operands): return operands.map { grouped($0) }.joined(separator: " or ")
        case .not(let operand): return "not (" + expression(operand) + ")"
        case .thisIn(let references): return "this in " + parameter(.list(references.map(\.value)))
        case .comparison(let field, let op, let value): return "\(name(field)) \(op.rawValue) \(operand(value))"
        case .in(let field, let values): return "\(name(field)) in " + parameter(.list(values))
        case .notIn(let field, let values): return "\(name(field)) not in " + parameter(.list(values))
        case .exists(let field): return "\(name(field)) exists"
        case .notExists(let field): return "\(name(field)) not exists"
        case .startsWith(let field, let prefix): return "\(name(field)) starts with \(operand(.string(prefix)))"
        case .listContains(let field, let value): return "\(name(field)) contains \(operand(value))"
        case .containsAll(let field, let values): return "\(name(field)) contains all " + parameter(.list(values))
        case .near(let field, let point, let maximum):
            let near = "\(name(field)) near " + parameter(.geoPoint(point))
            return maximum.map { near + " within \(operand(.double($0))) meters" } ?? near
        case .withinBox(let field, let southwest, let northeast):
            return "\(name(field)) within box " + parameter(.geoPoint(southwest)) + " " + parameter(.geoPoint(northeast))
        }
    }

    /// An operand of `and`/`or`: nested `and`s and `or`s are parenthesized to keep the tree.
    private mutating func grouped(_ predicate: QueryPredicate) -> String {
        switch predicate {
        case .and, .or: "(" + expression(predicate) + ")"
        default: expression(predicate)
        }
    }

    private mutating func parameter(_ value: Value) -> String {
        parameters.append(value)
        return "?"
    }

    /// A literal when one reads back to the identical value, else a parameter.
    private mutating func operand(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        // Swift prints the shortest text that reads back to the same bits, always with a '.' or
        // an exponent (`1.0`, `1e-05`), so it lexes as a double again.
        case .double(let number) where number.isFinite: return "\(number)"
        case .string(let text):
            // Escaped per Unicode scalar, as the lexer reads it ('' is one quote).
            var literal = "'"
            for scalar in text.unicodeScalars {
                literal.unicodeScalars.append(scalar)
                if scalar == "'" { literal.unicodeScalars.append(scalar) }
            }
            return literal + "'"
        default: return parameter(value)
        }
    }

    private func name(_ field: String) -> String {
        var scalars = field.unicodeScalars.makeIterator()
        let bare =
            scalars.next().map { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || $0 == "_" } == true
            && field.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
            }
            && !QueryLexer.keywords.contains(field.lowercased())
        return bare ? field : "`" + field + "`"
    }
}
