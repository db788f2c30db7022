import RooftopShared
import Testing

/// Parse errors: the exact message and the 0-based offset for each kind of mistake.
struct QueryParserErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let text: String
        var parameters: [Value] = []
        let message: String
        let position: Int
        var testDescription: String { text }
    }

    /// (0, 0) as a value; a table cannot throw, and a null here would fail the cases that use it.
    static let origin: Value = (try? GeoPoint(latitude: 0, longitude: 0)).map(Value.geoPoint) ?? .null

    static let cases: [Case] = [
        Case(text: "where score abc 5", message: "expected an operator after 'score' at offset 12, found 'abc'", position: 12),
        Case(text: "where score", message: "expected an operator after 'score' at offset 11, found the end of the query", position: 11),
        Case(text: "where score > ? and name = ?", parameters: [1, "a", 3], message: "3 parameters given but the query has 2 '?'", position: 28),
        Case(text: "where score > ? and name = ?", parameters: [1], message: "1 parameter given but the query has 2 '?'", position: 27),
        Case(text: "where x = ?", message: "0 parameters given but the query has 1 '?'", position: 10),
        Case(text: "where tag in ?", parameters: ["a"], message: "'in' needs a list parameter at offset 13, not parameter 1 (a string)", position: 13),
        Case(text: "where tag in 'a'", message: "'in' needs a list parameter '?' at offset 13, found 'a'", position: 13),
        Case(text: "where tag not in ?", parameters: [1], message: "'not in' needs a list parameter at offset 17, not parameter 1 (an int)", position: 17),
        Case(text: "where tag contains all ?", parameters: [.null], message: "'contains all' needs a list parameter at offset 23, not parameter 1 (a null)", position: 23),
        Case(text: "where name starts with 5", message: "'starts with' needs a string at offset 23, not '5'", position: 23),
        Case(text: "where name starts 'S'", message: "expected 'with' after 'starts' at offset 18, found 'S'", position: 18),
        Case(text: "where loc near 5", message: "'near' needs a geoPoint parameter '?' at offset 15, found '5'", position: 15),
        Case(text: "where loc near ?", parameters: ["x"], message: "'near' needs a geoPoint parameter at offset 15, not parameter 1 (a string)", position: 15),
        Case(text: "where loc within box ?", parameters: ["x"], message: "'within box' (southwest corner) needs a geoPoint parameter at offset 21, not parameter 1 (a string)", position: 21),
        Case(text: "where loc within 5", message: "expected 'box' after 'within' at offset 17, found '5'", position: 17),
        Case(text: "where this in ?", parameters: [["s1", 7]], message: "'this in' needs object IDs or pointers, but element 2 of parameter 1 (a list) is an int (at offset 14)", position: 14),
        Case(text: "where this in ?", parameters: ["s1"], message: "'this in' needs a list of object IDs or pointers, or a relation parameter at offset 14, not parameter 1 (a string)", position: 14),
        Case(text: "where this = 1", message: "expected 'in' after 'this' at offset 11, found '='", position: 11),
        Case(text: "where 'abc' = 1", message: "expected a condition at offset 6, found 'abc'", position: 6),
        Case(text: "where order = 1", message: "expected a condition at offset 6, found the keyword 'order'; quote a field with that name as `order`", position: 6),
        Case(text: "where (a = 1", message: "expected ')' to close the '(' at offset 6, found the end of the query at offset 12", position: 12),
        Case(text: "where a = 1)", message: "expected 'and', 'or', 'order by', 'limit', 'offset', 'include' or the end of the query at offset 11, found ')'", position: 11),
        Case(text: "limit 5 where a = 1", message: "expected 'offset', 'include' or the end of the query at offset 8, found 'where'", position: 8),
        Case(text: "where a = 1 and", message: "expected a condition at offset 15, found the end of the query", position: 15),
        Case(text: "where a = 'abc", message: "the string starting at offset 10 is not closed with '", position: 10),
        Case(text: "where `a b` = 1", message: "invalid field name `a b`: use 1-64 characters of A-Z a-z 0-9 . - _ + / = at offset 6", position: 6),
        Case(text: "where `a = 1", message: "the field name starting at offset 6 is not closed with `", position: 6),
        Case(text: "where a == 1", message: "use '=' for equality, not '==' at offset 8", position: 8),
        Case(text: "where a <> 1", message: "use '!=' for inequality, not '<>' at offset 8", position: 8),
        Case(text: "where a ! 1", message: "unexpected character '!'; did you mean '!='? at offset 8", position: 8),
        Case(text: "where a = #", message: "unexpected character '#' at offset 10", position: 10),
        Case(text: "where é = 1", message: "unexpected character 'é' at offset 6", position: 6),
        Case(text: "where a = 99999999999999999999", message: "the integer 99999999999999999999 does not fit in 64 bits at offset 10", position: 10),
        Case(text: "where a = 1e999", message: "the number 1e999 is out of range for a double at offset 10", position: 10),
        Case(text: "where a = 1e", message: "expected digits in the exponent of the number at offset 10", position: 10),
        Case(text: "where a = b", message: "expected a value or '?' after '=' at offset 10, found 'b'", position: 10),
        Case(text: "where a not b", message: "expected 'in' or 'exists' after 'not' at offset 12, found 'b'", position: 12),
        Case(text: "where loc near ? within 5", parameters: [origin], message: "expected 'meters' after 'within 5' at offset 25, found the end of the query", position: 25),
        Case(text: "where loc near ? within 'x' meters", parameters: [origin], message: "'near … within' needs a number of meters at offset 24, not 'x'", position: 24),
        Case(text: "where a = 1 order score", message: "expected 'by' after 'order' at offset 18, found 'score'", position: 18),
        Case(text: "order by a desc where", message: "expected ',', 'limit', 'offset', 'include' or the end of the query at offset 16, found 'where'", position: 16),
        Case(text: "include a b", message: "expected '.', ',' or the end of the query at offset 10, found 'b'", position: 10),
        Case(text: "where", message: "expected a condition at offset 5, found the end of the query", position: 5),
        Case(text: "where a = 1 where", message: "expected 'and', 'or', 'order by', 'limit', 'offset', 'include' or the end of the query at offset 12, found 'where'", position: 12),
        Case(text: "order by", message: "expected a field name to order by at offset 8, found the end of the query", position: 8),
        Case(text: "limit -1", message: "'limit' needs an integer >= 0 at offset 6, not '-1'", position: 6),
        Case(text: "offset ?", parameters: ["2"], message: "'offset' needs an integer >= 0 at offset 7, not parameter 1 (a string)", position: 7),
        Case(text: "limit 2.0", message: "'limit' needs an integer >= 0 at offset 6, not '2.0'", position: 6),
        Case(text: "include author.", message: "expected a field name after '.' at offset 15, found the end of the query", position: 15),
        Case(
            text: "where " + String(repeating: "x", count: 65) + " = 1",
            message: "the field name '" + String(repeating: "x", count: 65) + "' is longer than 64 characters at offset 6", position: 6),
        Case(
            text: "where " + String(repeating: "(", count: 150) + "a = 1" + String(repeating: ")", count: 150),
            message: "the query nests more than 100 levels deep at offset 106", position: 106),
    ]

    @Test(arguments: cases)
    func reportsMessageAndPosition(_ example: Case) {
        #expect {
            try Query.parse(className: "GameScore", text: example.text, parameters: example.parameters)
        } throws: { error in
            guard let error = error as? RooftopError else { return false }
            #expect(error.code == .invalidQuery)
            #expect(error.message == example.message)
            #expect(error.position == example.position)
            return true
        }
    }

    @Test func positionsCountUnicodeScalars() throws {
        let error = #expect(throws: RooftopError.self) {
            try Query.parse(className: "T", text: "where name = 'Seán' and x ~ 1")
        }
        // "where name = 'Seán' and x " is 26 scalars; '~' sits at offset 26.
        #expect(error?.position == 26)
    }

    @Test func messagesOfKeywordsAsFieldsSuggestBackticks() throws {
        #expect(throws: RooftopError.self) { try Query.parse(className: "T", text: "where limit = 1") }
        let quoted = try Query.parse(className: "T", text: "where `limit` = 1")
        #expect(quoted.predicate == .comparison(field: "limit", op: .equal, value: 1))
    }
}
