import RooftopShared
import Testing

/// Every operator over the fixture objects (see ``QueryFixtures/scores()`` for the table).
/// Without an explicit order, results come by objectId, or by distance for `near`.
struct QueryEvaluatorTests {
    typealias F = QueryFixtures

    @Test func comparisonsUseTheTotalOrder() throws {
        // int 10 and double 10.0 are equivalent.
        #expect(try F.ids(Field("score") == 10) == ["s1", "s2"])
        #expect(try F.ids(Field("score") == 10.0) == ["s1", "s2"])
        // A string sorts after every number; null before every number.
        #expect(try F.ids(Field("score") > 5) == ["s1", "s2", "s3"])
        #expect(try F.ids(Field("score") >= 10) == ["s1", "s2", "s3"])
        #expect(try F.ids(Field("score") < 5) == ["s4", "s6"])
        #expect(try F.ids(Field("score") <= 2.5) == ["s4", "s6"])
        #expect(try F.ids(Field("score") > "a") == ["s3"])
        #expect(try F.ids(Field("score") < "a") == ["s1", "s2", "s4", "s6"])
        // Decimals sort after every number.
        #expect(try F.ids(Field("score") < .decimal(DecimalNumber("1"))) == ["s1", "s2", "s4", "s6"])
    }

    @Test func missingFieldsMatchOnlyNegativeConditions() throws {
        // s5 has no score: only '!=', 'not in', 'not exists' and 'not' match it.
        #expect(try F.ids(Field("score") != 10) == ["s3", "s4", "s5", "s6"])
        #expect(try F.ids(Field("score").notIn([10])) == ["s3", "s4", "s5", "s6"])
        #expect(try F.ids(Field("score").notExists) == ["s5"])
        #expect(try F.ids(!(Field("score") > 5)) == ["s4", "s5", "s6"])
        for positive in [Field("score") < 1000, Field("score") >= .null, Field("score").in([.null]), Field("score").exists] {
            #expect(try !F.ids(positive).contains("s5"))
        }
    }

    @Test func nullIsAValueButNotAMissingField() throws {
        #expect(try F.ids(Field("score") == nil) == ["s4"])
        #expect(try F.ids(Field("score") != nil) == ["s1", "s2", "s3", "s5", "s6"])
        #expect(try F.ids(Field("score").exists) == ["s1", "s2", "s3", "s4", "s6"])
        #expect(try F.ids(Field("score").in([nil])) == ["s4"])
    }

    @Test func datesSortBeforeDays() throws {
        #expect(try F.ids(Field("when") > .date(F.t0)) == ["s2"])
        #expect(try F.ids(Field("when") >= .date(F.t0)) == ["s1", "s2"])
        #expect(try F.ids(Field("when") < .day(Day(daysSinceEpoch: 0))) == ["s1"])
    }

    @Test func builtInFieldsAreFields() throws {
        #expect(try F.ids(Field("objectId") > "s4") == ["s5", "s6"])
        #expect(try F.ids(Field("createdAt") > .date(Timestamp(millisecondsSinceEpoch: F.t0.millisecondsSinceEpoch + 3))) == ["s4", "s5", "s6"])
        #expect(try F.ids(Field("updatedAt").exists).isEmpty)
    }

    @Test func inAndNotIn() throws {
        #expect(try F.ids(Field("score").in([10, "high"])) == ["s1", "s2", "s3"])
        #expect(try F.ids(Field("score").in([.double(2.5), 99])) == ["s6"])
        #expect(try F.ids(Field("score").in([])).isEmpty)
        #expect(try F.ids(Field("score").notIn([])) == ["s1", "s2", "s3", "s4", "s5", "s6"])
        #expect(try F.ids(Field("score").notIn([10, .null, "high"])) == ["s5", "s6"])
    }

    @Test func startsWithComparesUTF8Bytes() throws {
        #expect(try F.ids(Field("name").startsWith("Se")) == ["s1", "s2", "s6"])
        #expect(try F.ids(Field("name").startsWith("se")) == ["s4"])
        #expect(try F.ids(Field("name").startsWith("Seá")) == ["s6"])
        // "e" + combining acute is not "é": no normalization.
        #expect(try F.ids(Field("name").startsWith("Se\u{301}")).isEmpty)
        #expect(try F.ids(Field("name").startsWith("")) == ["s1", "s2", "s3", "s4", "s6"])
        // Only strings match, whatever the field.
        #expect(try F.ids(Field("score").startsWith("h")) == ["s3"])
        #expect(try F.ids(Field("score").startsWith("1")).isEmpty)
    }

    @Test func listContainsOnListsAndRelations() throws {
        #expect(try F.ids(Field("tags").contains("a")) == ["s1", "s4"])
        #expect(try F.ids(Field("tags").contains(1.0)) == ["s4"])
        #expect(try F.ids(Field("tags").contains("z")).isEmpty)
        #expect(try F.ids(Field("friends").contains(.pointer(F.user("u1")))) == ["s1"])
        // A pointer of another class, or a bare ID, is not a relation member.
        #expect(try F.ids(Field("friends").contains(.pointer(Pointer(className: "Other", objectId: "u1")))).isEmpty)
        #expect(try F.ids(Field("friends").contains("u1")).isEmpty)
        // A string is not a list.
        #expect(try F.ids(Field("name").contains("S")).isEmpty)
    }

    @Test func containsAllOnListsAndRelations() throws {
        #expect(try F.ids(Field("tags").containsAll(["a", "b"])) == ["s1"])
        #expect(try F.ids(Field("tags").containsAll(["b"])) == ["s1", "s2"])
        #expect(try F.ids(Field("tags").containsAll([1, "a"])) == ["s4"])
        #expect(try F.ids(Field("tags").containsAll([])) == ["s1", "s2", "s3", "s4", "s6"])
        #expect(try F.ids(Field("friends").containsAll([.pointer(F.user("u1")), .pointer(F.user("u2"))])) == ["s1"])
        #expect(try F.ids(Field("friends").containsAll([.pointer(F.user("u1")), .pointer(F.user("u3"))])).isEmpty)
        #expect(try F.ids(Field("friends").containsAll([])) == ["s1"])
        #expect(try F.ids(Field("name").containsAll([])).isEmpty)
    }

    @Test func nearFiltersByDistanceAndOrdersNearestFirst() throws {
        let madrid = try F.geo(F.madrid.0, F.madrid.1)
        let fiji = try F.geo(F.fiji.0, F.fiji.1)
        // Paris is about 1,053 km from Madrid; then Samoa, Fiji, Sydney (17,380 / 17,485 / 17,685 km).
        #expect(try F.ids(Field("location").near(madrid)) == ["s1", "s2", "s5", "s4", "s3"])
        #expect(try F.ids(Field("location").near(madrid, maxDistanceMeters: 1_100_000)) == ["s1", "s2"])
        #expect(try F.ids(Field("location").near(madrid, maxDistanceMeters: 1_000_000)) == ["s1"])
        #expect(try F.ids(Field("location").near(madrid, maxDistanceMeters: 0)) == ["s1"])
        // Fiji to Samoa is about 270 km, across the antimeridian.
        #expect(try F.ids(Field("location").near(fiji, maxDistanceMeters: 300_000)) == ["s4", "s5"])
    }

    @Test func distanceOrderOnlyFromTopLevelAndWithoutExplicitOrder() throws {
        let madrid = try F.geo(F.madrid.0, F.madrid.1)
        #expect(try F.ids(Field("name").exists && Field("location").near(madrid)) == ["s1", "s2", "s4", "s3"])
        // Nested ands count as top level.
        #expect(try F.ids(.and([Field("name").exists, .and([Field("level").exists, Field("location").near(madrid)])])) == ["s1", "s2", "s4", "s3"])
        // Inside an 'or' or a 'not', near does not order.
        #expect(try F.ids(Field("location").near(madrid) || Field("name") == "x") == ["s1", "s2", "s3", "s4", "s5"])
        // An explicit order wins (missing name first).
        let ordered = Query("GameScore").where(Field("location").near(madrid)).order(by: "name")
        #expect(try F.run(ordered).objects.map(\.objectId) == ["s5", "s3", "s1", "s2", "s4"])
    }

    @Test func withinBoxIncludingAcrossTheAntimeridian() throws {
        #expect(try F.ids(Field("location").within(southwest: F.geo(35, -10), northeast: F.geo(60, 20))) == ["s1", "s2"])
        // sw.lon 170 > ne.lon -170: the box crosses the antimeridian and holds Fiji and Samoa.
        #expect(try F.ids(Field("location").within(southwest: F.geo(-20, 170), northeast: F.geo(-10, -170))) == ["s4", "s5"])
        // The same longitudes the other way round span the rest of the world instead.
        #expect(try F.ids(Field("location").within(southwest: F.geo(-20, -170), northeast: F.geo(-10, 170))).isEmpty)
        // Edges are inclusive.
        let madrid = try F.geo(F.madrid.0, F.madrid.1)
        #expect(try F.ids(Field("location").within(southwest: madrid, northeast: madrid)) == ["s1"])
    }

    @Test func thisInMatchesTheObjectItself() throws {
        let references: [ObjectReference] = [
            "s1", .pointer(Pointer(className: "GameScore", objectId: "s2")), .pointer(Pointer(className: "Other", objectId: "s3")),
        ]
        #expect(try F.ids(.thisIn(references)) == ["s1", "s2"])
        #expect(try F.ids(.thisIn([])).isEmpty)
        #expect(try F.ids(!.thisIn(["s1"])) == ["s2", "s3", "s4", "s5", "s6"])
    }

    @Test func logicalCombinations() throws {
        #expect(try F.ids(Field("score") > 5 && Field("name").startsWith("Se")) == ["s1", "s2"])
        #expect(try F.ids(Field("score") == "high" || Field("tags").contains("c")) == ["s3", "s6"])
        #expect(try F.ids(.and([])) == ["s1", "s2", "s3", "s4", "s5", "s6"])
        #expect(try F.ids(.or([])).isEmpty)
    }
}
