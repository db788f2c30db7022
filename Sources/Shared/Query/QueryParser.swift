/// A recursive-descent parser for the query text form (grammar on
/// ``Query/parse(className:text:parameters:)``).
struct QueryParser {
    /// Nesting (parentheses and `not`) beyond this is refused so that hostile text cannot exhaust
    /// the stack; ``Query/validate(maxDepth:)`` applies the real, lower limit.
    static let maxNesting = 100

    private let tokens: [QueryToken]
    let parameters: [Value]
    private var index = 0

    init(tokens: [QueryToken], parameters: [Value]) {
        self.tokens = tokens
        self.parameters = parameters
    }

    var current: QueryToken { tokens[min(index, tokens.count - 1)] }

    mutating func advance() -> QueryToken {
        let token = current
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    func isKeyword(_ word: String) -> Bool { current.kind == .keyword(word) }

    mutating func accept(_ word: String) -> Bool {
        guard isKeyword(word) else { return false }
        _ = advance()
        return true
    }

    mutating func expect(_ word: String, after context: String) throws(RooftopError) {
        guard accept(word) else {
            throw fail("expected '\(word)' after '\(context)' at offset \(current.position), found \(current.shown)")
        }
    }

    func fail(_ message: String, at token: QueryToken? = nil) -> RooftopError {
        RooftopError(.invalidQuery, message, position: (token ?? current).position)
    }

    // MARK: Clauses

    /// `[where expr] [order by keys] [limit n] [offset n] [include paths]`, in that order.
    mutating func parseQuery(className: String) throws(RooftopError) -> Query {
        var query = Query(className: className)
        // What may follow the last clause present, for the message when something else does.
        var following = ["'where'", "'order by'", "'limit'", "'offset'", "'include'"]
        if accept("where") {
            query.predicate = try parseOr(nesting: 0)
            following = ["'and'", "'or'", "'order by'", "'limit'", "'offset'", "'include'"]
        }
        if accept("order") {
            try expect("by", after: "order")
            repeat {
                let name = try parseFieldName(expecting: "a field name to order by")
                let descending = accept("desc")
                if !descending { _ = accept("asc") }
                query.order.append(QueryOrder(name, descending: descending))
            } while acceptPunctuation(",")
            following = ["','", "'limit'", "'offset'", "'include'"]
        }
        if accept("limit") {
            query.limit = try parseCount("limit")
            following = ["'offset'", "'include'"]
        }
        if accept("offset") {
            query.offset = try parseCount("offset")
            following = ["'include'"]
        }
        if accept("include") {
            repeat {
                var path = [try parseFieldName(expecting: "a field name to include")]
                while acceptPunctuation(".") { path.append(try parseFieldName(expecting: "a field name after '.'")) }
                query.includes.append(path)
            } while acceptPunctuation(",")
            following = ["'.'", "','"]
        }
        guard case .end = current.kind else {
            let options = following.joined(separator: ", ") + " or the end of the query"
            throw fail("expected \(options) at offset \(current.position), found \(current.shown)")
        }
        return query
    }

    mutating func acceptPunctuation(_ character: Character) -> Bool {
        guard current.kind == .punctuation(character) else { return false }
        _ = advance()
        return true
    }

    mutating func parseCount(_ clause: String) throws(RooftopError) -> Int {
        let operand = try parseOperand(for: "'\(clause)'")
        guard case .int(let value) = operand.value, let count = Int(exactly: value), count >= 0 else {
            throw fail("'\(clause)' needs an integer >= 0 at offset \(operand.token.position), not \(operand.shown)", at: operand.token)
        }
        return count
    }

    // MARK: Predicates

    private mutating func parseOr(nesting: Int) throws(RooftopError) -> QueryPredicate {
        var operands = [try parseAnd(nesting: nesting)]
        while accept("or") { operands.append(try parseAnd(nesting: nesting)) }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    private mutating func parseAnd(nesting: Int) throws(RooftopError) -> QueryPredicate {
        var operands = [try parseUnary(nesting: nesting)]
        while accept("and") { operands.append(try parseUnary(nesting: nesting)) }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    private mutating func parseUnary(nesting: Int) throws(RooftopError) -> QueryPredicate {
        guard nesting < QueryParser.maxNesting else {
            throw fail("the query nests more than \(QueryParser.maxNesting) levels deep at offset \(current.position)")
        }
        if accept("not") { return .not(try parseUnary(nesting: nesting + 1)) }
        if current.kind == .punctuation("(") {
            let open = advance()
            let inner = try parseOr(nesting: nesting + 1)
            guard acceptPunctuation(")") else {
                throw fail(
                    "expected ')' to close the '(' at offset \(open.position), found \(current.shown) at offset \(current.position)"
                )
            }
            return inner
        }
        if isKeyword("this") {
            let this = advance()
            try expect("in", after: "this")
            let operand = try parseParameter(for: "'this in'", needs: "a list of object IDs or pointers, or a relation")
            return .thisIn(try references(operand, this: this))
        }
        let fieldToken = current
        let field = try parseFieldName(expecting: "a condition")
        return try parseCondition(on: field, token: fieldToken)
    }

    private mutating func parseFieldName(expecting what: String) throws(RooftopError) -> String {
        switch current.kind {
        case .name(let name, _):
            _ = advance()
            return name
        case .keyword:
            throw fail(
                "expected \(what) at offset \(current.position), found the keyword \(current.shown); quote a field with that name as `\(current.text)`"
            )
        default:
            throw fail("expected \(what) at offset \(current.position), found \(current.shown)")
        }
    }
}
