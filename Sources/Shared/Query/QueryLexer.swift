/// A token of the query text form.
struct QueryToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// A keyword, lowercased (`where`, `and`, ...).
        case keyword(String)
        /// A field name, bare or from backticks.
        case name(String, quoted: Bool)
        /// A literal value: a string, an int, a double, true, false or null.
        case literal(Value)
        /// A `?`, with its 0-based parameter index.
        case parameter(Int)
        /// `=`, `!=`, `<`, `<=`, `>`, `>=`.
        case comparison(QueryPredicate.ComparisonOperator)
        /// `(`, `)`, `,` or `.`.
        case punctuation(Character)
        /// The end of the text.
        case end
    }

    let kind: Kind
    /// The offset of the token's first Unicode scalar in the text.
    let position: Int
    /// The token as written, for messages.
    let text: String

    /// How the token is named in messages: `'order'`, `the end of the query`.
    var shown: String {
        if case .end = kind { return "the end of the query" }
        let text = self.text.unicodeScalars.count > 40 ? String(self.text.prefix(40)) + "…" : self.text
        // Strings and quoted names show their own quotes.
        if let first = text.unicodeScalars.first, first == "'" || first == "`" { return text }
        return "'\(text)'"
    }
}

/// Splits query text into tokens. Offsets count Unicode scalars from 0.
struct QueryLexer {
    /// Words with a meaning in the text form; a field with one of these names (in any case) must be
    /// written in backticks.
    static let keywords: Set<String> = [
        "where", "and", "or", "not", "in", "exists", "starts", "with", "contains", "all", "near", "within",
        "meters", "box", "this", "order", "by", "asc", "desc", "limit", "offset", "include", "true", "false",
        "null",
    ]

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var parameterCount = 0

    /// Tokenizes the whole text; the last token is ``QueryToken/Kind/end``.
    /// - Throws: ``RooftopError/Code/invalidQuery`` at the offending offset.
    static func tokenize(_ text: String) throws(RooftopError) -> [QueryToken] {
        var lexer = QueryLexer(scalars: Array(text.unicodeScalars))
        var tokens: [QueryToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if case .end = token.kind { return tokens }
        }
    }

    private init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        index + ahead < scalars.count ? scalars[index + ahead] : nil
    }

    private func text(from start: Int) -> String {
        var string = ""
        string.unicodeScalars.append(contentsOf: scalars[start..<index])
        return string
    }

    private mutating func next() throws(RooftopError) -> QueryToken {
        while let scalar = peek(), scalar.properties.isWhitespace { index += 1 }
        let start = index
        guard let scalar = peek() else { return QueryToken(kind: .end, position: start, text: "") }
        func token(_ kind: QueryToken.Kind, length: Int) -> QueryToken {
            index += length
            return QueryToken(kind: kind, position: start, text: text(from: start))
        }
        switch scalar {
        case "(", ")", ",", ".": return token(.punctuation(Character(scalar)), length: 1)
        case "?":
            parameterCount += 1
            return token(.parameter(parameterCount - 1), length: 1)
        case "=":
            if peek(1) == "=" { throw Self.error("use '=' for equality, not '=='", at: start) }
            return token(.comparison(.equal), length: 1)
        case "!":
            guard peek(1) == "=" else { throw Self.error("unexpected character '!'; did you mean '!='?", at: start) }
            return token(.comparison(.notEqual), length: 2)
        case "<":
            if peek(1) == ">" { throw Self.error("use '!=' for inequality, not '<>'", at: start) }
            return peek(1) == "=" ? token(.comparison(.lessOrEqual), length: 2) : token(.comparison(.less), length: 1)
        case ">":
            return peek(1) == "=" ? token(.comparison(.greaterOrEqual), length: 2) : token(.comparison(.greater), length: 1)
        case "'": return try stringLiteral()
        case "`": return try quotedName()
        case "-" where peek(1).map(Self.isDigit) == true, "0"..."9": return try number()
        default:
            guard Self.isNameStart(scalar) else {
                throw Self.error("unexpected character '\(scalar)'", at: start)
            }
            while let next = peek(), Self.isNameStart(next) || Self.isDigit(next) { index += 1 }
            let word = text(from: start)
            let lowered = word.lowercased()
            switch lowered {
            case "true": return QueryToken(kind: .literal(.bool(true)), position: start, text: word)
            case "false": return QueryToken(kind: .literal(.bool(false)), position: start, text: word)
            case "null": return QueryToken(kind: .literal(.null), position: start, text: word)
            case _ where Self.keywords.contains(lowered):
                return QueryToken(kind: .keyword(lowered), position: start, text: word)
            default:
                guard word.unicodeScalars.count <= Identifier.maxLength else {
                    throw Self.error(
                        "the field name '\(QueryValidation.shown(word))' is longer than \(Identifier.maxLength) characters",
                        at: start)
                }
                return QueryToken(kind: .name(word, quoted: false), position: start, text: word)
            }
        }
    }

    /// `'text'`, with `''` standing for one quote.
    private mutating func stringLiteral() throws(RooftopError) -> QueryToken {
        let start = index
        index += 1
        var value = ""
        while true {
            guard let scalar = peek() else {
                throw Self.error("the string starting at offset \(start) is not closed with '", at: start, addOffset: false)
            }
            index += 1
            if scalar == "'" {
                guard peek() == "'" else { break }
                index += 1
            }
            value.unicodeScalars.append(scalar)
        }
        return QueryToken(kind: .literal(.string(value)), position: start, text: text(from: start))
    }

    /// `` `any.valid-ID` ``: any field name the ID rules allow.
    private mutating func quotedName() throws(RooftopError) -> QueryToken {
        let start = index
        index += 1
        while let scalar = peek(), scalar != "`" { index += 1 }
        guard peek() == "`" else {
            throw Self.error(
                "the field name starting at offset \(start) is not closed with `", at: start, addOffset: false)
        }
        var name = ""
        name.unicodeScalars.append(contentsOf: scalars[(start + 1)..<index])
        index += 1
        guard Identifier.isValid(name) else {
            throw Self.error(
                "invalid field name `\(QueryValidation.shown(name))`: use 1-\(Identifier.maxLength) characters of A-Z a-z 0-9 . - _ + / =",
                at: start)
        }
        return QueryToken(kind: .name(name, quoted: true), position: start, text: text(from: start))
    }

    /// `-?digits` is an int; with `.digits` and/or an exponent `e[+-]digits` it is a double.
    private mutating func number() throws(RooftopError) -> QueryToken {
        let start = index
        if peek() == "-" { index += 1 }
        func digits() -> Bool {
            let first = index
            while let scalar = peek(), Self.isDigit(scalar) { index += 1 }
            return index > first
        }
        _ = digits()
        var isDouble = false
        if peek() == ".", peek(1).map(Self.isDigit) == true {
            isDouble = true
            index += 1
            _ = digits()
        }
        if peek() == "e" || peek() == "E" {
            isDouble = true
            index += 1
            if peek() == "+" || peek() == "-" { index += 1 }
            guard digits() else {
                throw Self.error("expected digits in the exponent of the number", at: start)
            }
        }
        let literal = text(from: start)
        if isDouble {
            guard let value = Double(literal), value.isFinite else {
                throw Self.error("the number \(literal) is out of range for a double", at: start)
            }
            return QueryToken(kind: .literal(.double(value)), position: start, text: literal)
        }
        guard let value = Int64(literal) else {
            throw Self.error("the integer \(literal) does not fit in 64 bits", at: start)
        }
        return QueryToken(kind: .literal(.int(value)), position: start, text: literal)
    }

    static func error(_ message: String, at position: Int, addOffset: Bool = true) -> RooftopError {
        RooftopError(.invalidQuery, addOffset ? "\(message) at offset \(position)" : message, position: position)
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    private static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
    }
}
