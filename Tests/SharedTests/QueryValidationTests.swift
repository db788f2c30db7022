import RooftopShared
import Testing

struct QueryValidationTests {
    static func error(_ query: Query, maxDepth: Int = Query.defaultMaxDepth) -> RooftopError? {
        do {
            try query.validate(maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    @Test func acceptsValidQueriesWithBuiltInFields() throws {
        let point = try QueryFixtures.geo(10, 170)
        let other = try QueryFixtures.geo(20, -170)
        let query = Query("GameScore")
            .where(
                Field("objectId") == "a" && Field("createdAt") > .date(QueryFixtures.t0) && Field("updatedAt").exists
                    && Field("first-name.x+y/z=") == 1 && Field("loc").near(point, maxDistanceMeters: 0)
                    && Field("loc").within(southwest: point, northeast: other) && .thisIn([]))
            .order(by: "createdAt").limit(0).offset(0).including("author", "company")
        #expect(Self.error(query) == nil)
    }

    @Test(arguments: ["a b", "", String(repeating: "x", count: 65), "x;DROP TABLE t", "score'--", "naïve", "a`b"])
    func rejectsHostileOrInvalidFieldNames(name: String) {
        let places = [
            Query("T").where(Field(name) == 1),
            Query("T").where(Field("ok").exists && !Field(name).in([])),
            Query("T").order(by: name),
            Query("T").including("ok", name),
        ]
        for query in places {
            let error = Self.error(query)
            #expect(error?.code == .invalidQuery)
            #expect(error?.message.hasPrefix("invalid field name") == true)
            #expect(error?.field != nil)
        }
    }

    @Test func rejectsTheACLAndInvalidClassNames() {
        #expect(Self.error(Query("T").where(Field("ACL").exists))?.message == "the ACL cannot be queried")
        #expect(Self.error(Query("bad class"))?.message.hasPrefix("invalid class name 'bad class'") == true)
    }

    @Test func rejectsNegativePaging() {
        #expect(Self.error(Query("T").limit(-1))?.message == "limit must be >= 0, not -1")
        #expect(Self.error(Query("T").offset(-5))?.message == "offset must be >= 0, not -5")
    }

    @Test func limitsNestingDepth() {
        var predicate = Field("a").exists
        for _ in 0..<5 { predicate = !predicate }
        #expect(predicate.depth == 6)
        #expect(Self.error(Query("T").where(predicate), maxDepth: 6) == nil)
        #expect(
            Self.error(Query("T").where(predicate), maxDepth: 5)?.message
                == "the predicate nests 6 levels deep; at most 5 are allowed")
        let longPath = Query("T").including("a", "b", "c")
        #expect(Self.error(longPath, maxDepth: 2)?.message == "an include path needs 1 to 2 fields, not 3")
        #expect(Self.error(Query(className: "T", includes: [[]]))?.message == "an include path needs 1 to 16 fields, not 0")
    }

    @Test func andAndOrNeedTwoOperands() {
        #expect(
            Self.error(Query("T").where(.and([Field("a").exists])))?.message
                == "'and' needs at least 2 operands, not 1; use the operand itself, or no predicate")
        #expect(Self.error(Query("T").where(.not(.or([]))))?.message.hasPrefix("'or' needs at least 2 operands, not 0") == true)
    }

    @Test func checksGeoOperands() throws {
        let south = try QueryFixtures.geo(-10, 0)
        let north = try QueryFixtures.geo(10, 0)
        for bad in [-1, Double.infinity, Double.nan] {
            let error = Self.error(Query("T").where(Field("p").near(south, maxDistanceMeters: bad)))
            #expect(error?.message.hasPrefix("'near' needs a maximum distance that is finite and >= 0") == true)
            #expect(error?.field == "p")
        }
        #expect(
            Self.error(Query("T").where(Field("p").within(southwest: north, northeast: south)))?.message
                == "'within box' needs the southwest latitude (10.0) <= the northeast latitude (-10.0)")
    }
}
