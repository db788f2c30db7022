import RooftopShared
import Testing

struct QueryBuilderTests {
    @Test func builderGivesTheSameQueryAsTheText() throws {
        let built = Query("GameScore")
            .where(Field("score") > 100 && (Field("name") == "Sean" || Field("tag").in(["a", "b"])))
            .order(by: "score", descending: true)
            .order(by: "name")
            .limit(10)
            .offset(20)
            .including("author")
        let parsed = try Query.parse(
            className: "GameScore",
            text: "where score > ? and (name = ? or tag in ?) order by score desc, name limit 10 offset 20 include author",
            parameters: [100, "Sean", ["a", "b"]])
        #expect(built == parsed)
    }

    @Test func comparisonOperatorsMakeComparisons() {
        let field = Field("score")
        let pairs: [(QueryPredicate, QueryPredicate.ComparisonOperator)] = [
            (field == 1, .equal), (field != 1, .notEqual), (field < 1, .less),
            (field <= 1, .lessOrEqual), (field > 1, .greater), (field >= 1, .greaterOrEqual),
        ]
        for (predicate, op) in pairs {
            #expect(predicate == .comparison(field: "score", op: op, value: 1))
        }
        #expect((Field("x") == nil) == .comparison(field: "x", op: .equal, value: .null))
        #expect((Field("x") == 1.5) == .comparison(field: "x", op: .equal, value: .double(1.5)))
    }

    @Test func fieldMethodsMakeEveryCondition() throws {
        let point = try QueryFixtures.geo(1, 2)
        let other = try QueryFixtures.geo(3, 4)
        let f = Field("f")
        #expect(f.in([1, "a"]) == .in(field: "f", values: [1, "a"]))
        #expect(f.notIn([]) == .notIn(field: "f", values: []))
        #expect(f.exists == .exists(field: "f"))
        #expect(f.notExists == .notExists(field: "f"))
        #expect(f.startsWith("ab") == .startsWith(field: "f", prefix: "ab"))
        #expect(f.contains("a") == .listContains(field: "f", value: "a"))
        #expect(f.containsAll(["a", "b"]) == .containsAll(field: "f", values: ["a", "b"]))
        #expect(f.near(point) == .near(field: "f", point: point, maxDistanceMeters: nil))
        #expect(f.near(point, maxDistanceMeters: 5) == .near(field: "f", point: point, maxDistanceMeters: 5))
        #expect(f.within(southwest: point, northeast: other) == .withinBox(field: "f", southwest: point, northeast: other))
        let pointer = Pointer(className: "T", objectId: "x")
        #expect(QueryPredicate.thisIn(["a", .pointer(pointer)]) == .thisIn([.objectId("a"), .pointer(pointer)]))
    }

    @Test func logicalOperatorsFlattenAndNegate() {
        let a = Field("a").exists, b = Field("b").exists, c = Field("c").exists, d = Field("d").exists
        #expect((a && b && c) == .and([a, b, c]))
        #expect((a && (b && c)) == .and([a, b, c]))
        #expect((a || b || c) == .or([a, b, c]))
        #expect((a && b || c && d) == .or([.and([a, b]), .and([c, d])]))
        #expect(((a || b) && c) == .and([.or([a, b]), c]))
        #expect(!a == .not(a))
        #expect(!(!a) == .not(.not(a)))
    }

    @Test func whereCombinesWithTheExistingPredicate() {
        let query = Query("T").where(Field("a") == 1).where(Field("b") == 2).where(Field("c") == 3)
        #expect(query.predicate == .and([Field("a") == 1, Field("b") == 2, Field("c") == 3]))
        #expect(Query("T").predicate == nil)
    }

    @Test func includingTakesOneFieldPerPathStep() {
        let query = Query("Post").including("author").including("author", "company").including("a.b")
        #expect(query.includes == [["author"], ["author", "company"], ["a.b"]])
        #expect(query.offset == 0 && query.limit == nil && query.order.isEmpty)
    }
}
