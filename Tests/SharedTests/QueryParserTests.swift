import RooftopShared
import Testing

/// Golden tests: a table of texts (with parameters) and the exact AST each must parse to.
struct QueryParserTests {
    struct Golden {
        let text: String
        var parameters: [Value] = []
        let query: Query
    }

    static func q(_ predicate: QueryPredicate? = nil, order: [QueryOrder] = [], limit: Int? = nil, offset: Int = 0, includes: [[String]] = []) -> Query {
        Query(className: "GameScore", predicate: predicate, order: order, limit: limit, offset: offset, includes: includes)
    }

    static func c(_ field: String, _ op: QueryPredicate.ComparisonOperator, _ value: Value) -> QueryPredicate {
        .comparison(field: field, op: op, value: value)
    }

    static func goldens() throws -> [Golden] {
        let madrid = try QueryFixtures.geo(40.4168, -3.7038)
        let southwest = try QueryFixtures.geo(-20, 170)
        let northeast = try QueryFixtures.geo(-10, -170)
        let u1 = QueryFixtures.user("u1")
        return [
            Golden(text: "", query: q()),
            Golden(text: "   \n\t ", query: q()),
            Golden(text: "where score > 100", query: q(c("score", .greater, 100))),
            Golden(text: "WHERE score >= 1.5", query: q(c("score", .greaterOrEqual, .double(1.5)))),
            Golden(text: "where score < -7", query: q(c("score", .less, -7))),
            Golden(text: "where score <= 2e3", query: q(c("score", .lessOrEqual, .double(2000)))),
            Golden(text: "where score = 2.5E-3", query: q(c("score", .equal, .double(0.0025)))),
            Golden(text: "where score != -0.0", query: q(c("score", .notEqual, .double(-0.0)))),
            Golden(text: "where score = -9223372036854775808", query: q(c("score", .equal, .int(.min)))),
            Golden(text: "where name = 'Sean'", query: q(c("name", .equal, "Sean"))),
            Golden(text: "where name = 'O''Brien'", query: q(c("name", .equal, "O'Brien"))),
            Golden(text: "where name = ''", query: q(c("name", .equal, ""))),
            Golden(text: "where name = 'Seán 🎮'", query: q(c("name", .equal, "Seán 🎮"))),
            Golden(text: "where flag = true and other = FALSE and x != Null", query: q(.and([c("flag", .equal, true), c("other", .equal, false), c("x", .notEqual, .null)]))),
            Golden(
                text: "where score > ? and (name = ? or tag in ?) order by score desc, name limit 10 offset 20",
                parameters: [100, "Sean", ["a", "b"]],
                query: q(
                    .and([c("score", .greater, 100), .or([c("name", .equal, "Sean"), .in(field: "tag", values: ["a", "b"])])]),
                    order: [QueryOrder("score", descending: true), QueryOrder("name")], limit: 10, offset: 20)),
            Golden(text: "where a = 1 or b = 2 and c = 3", query: q(.or([c("a", .equal, 1), .and([c("b", .equal, 2), c("c", .equal, 3)])]))),
            Golden(text: "where (a = 1 or b = 2) and c = 3", query: q(.and([.or([c("a", .equal, 1), c("b", .equal, 2)]), c("c", .equal, 3)]))),
            Golden(text: "where a = 1 and (b = 2 and c = 3)", query: q(.and([c("a", .equal, 1), .and([c("b", .equal, 2), c("c", .equal, 3)])]))),
            Golden(text: "where ((a = 1))", query: q(c("a", .equal, 1))),
            Golden(text: "where not a = 1", query: q(.not(c("a", .equal, 1)))),
            Golden(text: "where not (a = 1 or b = 2)", query: q(.not(.or([c("a", .equal, 1), c("b", .equal, 2)])))),
            Golden(text: "where not not a exists and b = 1", query: q(.and([.not(.not(.exists(field: "a"))), c("b", .equal, 1)]))),
            Golden(text: "where tag in ?", parameters: [[]], query: q(.in(field: "tag", values: []))),
            Golden(text: "where tag not in ?", parameters: [["a", 1]], query: q(.notIn(field: "tag", values: ["a", 1]))),
            Golden(text: "where tag exists", query: q(.exists(field: "tag"))),
            Golden(text: "where tag NOT EXISTS", query: q(.notExists(field: "tag"))),
            Golden(text: "where name starts with 'Se'", query: q(.startsWith(field: "name", prefix: "Se"))),
            Golden(text: "where name starts with ?", parameters: ["S"], query: q(.startsWith(field: "name", prefix: "S"))),
            Golden(text: "where tags contains 'a'", query: q(.listContains(field: "tags", value: "a"))),
            Golden(text: "where friends contains ?", parameters: [.pointer(u1)], query: q(.listContains(field: "friends", value: .pointer(u1)))),
            Golden(text: "where tags contains all ?", parameters: [["a", "b"]], query: q(.containsAll(field: "tags", values: ["a", "b"]))),
            Golden(text: "where location near ?", parameters: [.geoPoint(madrid)], query: q(.near(field: "location", point: madrid, maxDistanceMeters: nil))),
            Golden(
                text: "where location near ? within 1000 meters", parameters: [.geoPoint(madrid)],
                query: q(.near(field: "location", point: madrid, maxDistanceMeters: 1000))),
            Golden(
                text: "where location near ? within ? meters", parameters: [.geoPoint(madrid), .double(2.5)],
                query: q(.near(field: "location", point: madrid, maxDistanceMeters: 2.5))),
            Golden(
                text: "where location within box ? ?", parameters: [.geoPoint(southwest), .geoPoint(northeast)],
                query: q(.withinBox(field: "location", southwest: southwest, northeast: northeast))),
            Golden(
                text: "where this in ?", parameters: [["s1", .pointer(u1)]],
                query: q(.thisIn([.objectId("s1"), .pointer(u1)]))),
            Golden(
                text: "where this in ?", parameters: [.relation(Relation(className: "_User", objectIds: ["u2", "u1"]))],
                query: q(.thisIn([.pointer(u1), .pointer(QueryFixtures.user("u2"))]))),
            Golden(text: "where `first-name` = 'x'", query: q(c("first-name", .equal, "x"))),
            Golden(text: "where `order` = 1 and `a.b` = 2", query: q(.and([c("order", .equal, 1), c("a.b", .equal, 2)]))),
            Golden(text: "where objectId = 'abc' and createdAt > ?", parameters: [.date(QueryFixtures.t0)], query: q(.and([c("objectId", .equal, "abc"), c("createdAt", .greater, .date(QueryFixtures.t0))]))),
            Golden(text: "order by createdAt", query: q(order: [QueryOrder("createdAt")])),
            Golden(text: "order by score asc, name DESC", query: q(order: [QueryOrder("score"), QueryOrder("name", descending: true)])),
            Golden(text: "limit ?", parameters: [5], query: q(limit: 5)),
            Golden(text: "limit 0 offset 5", query: q(limit: 0, offset: 5)),
            Golden(text: "offset ?", parameters: [3], query: q(offset: 3)),
            Golden(text: "include author, author.company", query: q(includes: [["author"], ["author", "company"]])),
            Golden(text: "include `a.b`.c", query: q(includes: [["a.b", "c"]])),
            Golden(
                text: "Where A = 1 AND b = 2\nOrder By A Desc Limit 3 Include author",
                query: q(.and([c("A", .equal, 1), c("b", .equal, 2)]), order: [QueryOrder("A", descending: true)], limit: 3, includes: [["author"]])),
            Golden(text: "where a=1and b<2", query: q(.and([c("a", .equal, 1), c("b", .less, 2)]))),
        ]
    }

    @Test func everyGoldenTextParsesToItsAST() throws {
        for golden in try Self.goldens() {
            let parsed = try Query.parse(className: "GameScore", text: golden.text, parameters: golden.parameters)
            #expect(parsed == golden.query, "text: \(golden.text)")
        }
    }

    @Test func everyGoldenASTSurvivesTextAndJSONRoundTrips() throws {
        for golden in try Self.goldens() {
            let form = try golden.query.textForm
            let reparsed = try Query.parse(className: "GameScore", text: form.text, parameters: form.parameters)
            #expect(reparsed == golden.query, "rendered: \(form.text)")
            let json = try QueryFixtures.encode(golden.query)
            #expect(try QueryFixtures.decode(Query.self, json) == golden.query, "json: \(json)")
        }
    }

    @Test func rendersCanonicalText() throws {
        let query = Query("GameScore")
            .where(Field("score") > 100 && (Field("name") == "O'Brien" || Field("tag").in(["a", "b"])) && !Field("order").exists)
            .order(by: "score", descending: true).order(by: "first-name")
            .limit(10).offset(20)
            .including("author").including("author", "company")
        let form = try query.textForm
        #expect(
            form.text
                == "where score > 100 and (name = 'O''Brien' or tag in ?) and not (`order` exists) order by score desc, `first-name` limit 10 offset 20 include author, author.company"
        )
        #expect(form.parameters == [["a", "b"]])
    }

    @Test func rendersNonLiteralValuesAsParameters() throws {
        let point = try QueryFixtures.geo(1, 2)
        let query = Query("T").where(
            Field("d") == .date(QueryFixtures.t0) && Field("n") != .double(.nan) && Field("x") == 1.5
                && Field("p").near(point, maxDistanceMeters: 10) && .thisIn(["a"]))
        let form = try query.textForm
        #expect(form.text == "where d = ? and n != ? and x = 1.5 and p near ? within 10.0 meters and this in ?")
        #expect(form.parameters == [.date(QueryFixtures.t0), .double(.nan), .geoPoint(point), ["a"]])
    }

    @Test func textFormRefusesQueriesTextCannotExpress() {
        #expect(throws: RooftopError.self) { try Query("T").where(.and([.exists(field: "a")])).textForm }
        #expect(throws: RooftopError.self) { try Query("T").where(.or([])).textForm }
        #expect(throws: RooftopError.self) { try Query("T").where(Field("a b").exists).textForm }
    }
}
