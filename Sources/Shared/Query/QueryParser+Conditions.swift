/// An operand in the text: a literal or a `?` with its parameter.
struct QueryOperand {
    let value: Value
    let token: QueryToken
    /// The 0-based parameter index, for a `?`.
    let parameter: Int?

    /// How the operand is named in messages: `'abc'`, `parameter 2 (a list)`.
    var shown: String {
        if let parameter { return "parameter \(parameter + 1) (\(value.typeName.withArticle))" }
        return token.shown
    }
}

extension QueryParser {
    /// The part of a condition after its field name.
    mutating func parseCondition(on field: String, token fieldToken: QueryToken) throws(RooftopError) -> QueryPredicate {
        let token = current
        switch token.kind {
        case .comparison(let op):
            _ = advance()
            let operand = try parseOperand(for: "'\(op.rawValue)'")
            return .comparison(field: field, op: op, value: operand.value)
        case .keyword("in"):
            _ = advance()
            return .in(field: field, values: try listParameter(for: "'in'"))
        case .keyword("not"):
            _ = advance()
            if accept("in") { return .notIn(field: field, values: try listParameter(for: "'not in'")) }
            if accept("exists") { return .notExists(field: field) }
            throw fail("expected 'in' or 'exists' after 'not' at offset \(current.position), found \(current.shown)")
        case .keyword("exists"):
            _ = advance()
            return .exists(field: field)
        case .keyword("starts"):
            _ = advance()
            try expect("with", after: "starts")
            let operand = try parseOperand(for: "'starts with'")
            guard case .string(let prefix) = operand.value else {
                throw mismatch("'starts with'", needs: "a string", operand)
            }
            return .startsWith(field: field, prefix: prefix)
        case .keyword("contains"):
            _ = advance()
            if accept("all") { return .containsAll(field: field, values: try listParameter(for: "'contains all'")) }
            return .listContains(field: field, value: try parseOperand(for: "'contains'").value)
        case .keyword("near"):
            _ = advance()
            let point = try geoPointParameter(for: "'near'")
            var maximum: Double?
            if accept("within") {
                let operand = try parseOperand(for: "'within'")
                guard let meters = operand.value.doubleValue else {
                    throw mismatch("'near … within'", needs: "a number of meters", operand)
                }
                maximum = meters
                try expect("meters", after: "within \(operand.token.text)")
            }
            return .near(field: field, point: point, maxDistanceMeters: maximum)
        case .keyword("within"):
            _ = advance()
            try expect("box", after: "within")
            let southwest = try geoPointParameter(for: "'within box' (southwest corner)")
            let northeast = try geoPointParameter(for: "'within box' (northeast corner)")
            return .withinBox(field: field, southwest: southwest, northeast: northeast)
        default:
            throw fail(
                "expected an operator after \(fieldToken.shown) at offset \(token.position), found \(token.shown)")
        }
    }

    /// A literal or a `?`.
    mutating func parseOperand(for context: String) throws(RooftopError) -> QueryOperand {
        let token = current
        switch token.kind {
        case .literal(let value):
            _ = advance()
            return QueryOperand(value: value, token: token, parameter: nil)
        case .parameter(let index):
            _ = advance()
            // The parameter count was checked against the '?' count before parsing.
            guard index < parameters.count else { throw fail("no parameter for the '?' at offset \(token.position)") }
            return QueryOperand(value: parameters[index], token: token, parameter: index)
        default:
            throw fail(
                "expected a value or '?' after \(context) at offset \(token.position), found \(token.shown)")
        }
    }

    /// A `?` only (lists, points and collections have no literal syntax).
    mutating func parseParameter(for context: String, needs kind: String) throws(RooftopError) -> QueryOperand {
        guard case .parameter = current.kind else {
            throw fail("\(context) needs \(kind) parameter '?' at offset \(current.position), found \(current.shown)")
        }
        return try parseOperand(for: context)
    }

    private mutating func listParameter(for context: String) throws(RooftopError) -> [Value] {
        let operand = try parseParameter(for: context, needs: "a list")
        guard case .list(let values) = operand.value else { throw mismatch(context, needs: "a list", operand) }
        return values
    }

    private mutating func geoPointParameter(for context: String) throws(RooftopError) -> GeoPoint {
        let operand = try parseParameter(for: context, needs: "a geoPoint")
        guard case .geoPoint(let point) = operand.value else { throw mismatch(context, needs: "a geoPoint", operand) }
        return point
    }

    /// The collection of `this in ?`: a list of object IDs and pointers, or a relation.
    func references(_ operand: QueryOperand, this: QueryToken) throws(RooftopError) -> [ObjectReference] {
        switch operand.value {
        case .relation(let relation):
            return relation.pointers.map(ObjectReference.pointer)
        case .list(let values):
            var references: [ObjectReference] = []
            for (offset, value) in values.enumerated() {
                guard let reference = ObjectReference(value) else {
                    throw fail(
                        "'this in' needs object IDs or pointers, but element \(offset + 1) of \(operand.shown) is \(value.typeName.withArticle) (at offset \(operand.token.position))",
                        at: operand.token)
                }
                references.append(reference)
            }
            return references
        default:
            throw mismatch("'this in'", needs: "a list of object IDs or pointers, or a relation", operand)
        }
    }

    private func mismatch(_ context: String, needs kind: String, _ operand: QueryOperand) -> RooftopError {
        let what = operand.parameter == nil ? "" : " parameter"
        return fail(
            "\(context) needs \(kind)\(what) at offset \(operand.token.position), not \(operand.shown)",
            at: operand.token)
    }
}

extension String {
    /// `an int`, `a string`: the type name with its article, for messages.
    var withArticle: String {
        guard let first = unicodeScalars.first else { return self }
        return ("aeiou".unicodeScalars.contains(first) ? "an " : "a ") + self
    }
}
