import RooftopShared
import Testing

/// Ordering, paging, counting, read permissions and includes of ``QueryEvaluator/run``.
struct QueryEvaluatorRunTests {
    typealias F = QueryFixtures

    static func ids(_ query: Query, canRead: (ObjectSnapshot) -> Bool = { $0.objectId != "u2" }) throws -> [String] {
        try F.run(query, canRead: canRead).objects.map(\.objectId)
    }

    @Test func ordersByTheValueOrderWithMissingFirst() throws {
        // missing < null < 2.5 < 10 ≡ 10.0 (tie: objectId) < "high"
        #expect(try Self.ids(Query("GameScore").order(by: "score")) == ["s5", "s4", "s6", "s1", "s2", "s3"])
        // Descending reverses the key but not the objectId tie-break; missing goes last.
        #expect(try Self.ids(Query("GameScore").order(by: "score", descending: true)) == ["s3", "s1", "s2", "s6", "s4", "s5"])
    }

    @Test func ordersByKeysInTurnThenObjectId() throws {
        #expect(
            try Self.ids(Query("GameScore").order(by: "level", descending: true).order(by: "score"))
                == ["s4", "s2", "s6", "s1", "s3", "s5"])
        #expect(try Self.ids(Query("GameScore").order(by: "level")) == ["s5", "s1", "s3", "s6", "s2", "s4"])
        #expect(try Self.ids(Query("GameScore").order(by: "createdAt", descending: true)) == ["s4", "s5", "s6", "s1", "s3", "s2"])
        // Strings by UTF-8 bytes: uppercase before lowercase, 'á' after ASCII.
        #expect(try Self.ids(Query("GameScore").order(by: "name")) == ["s5", "s3", "s1", "s2", "s6", "s4"])
    }

    @Test func hugeLimitsWithAnOffsetTakeWhatIsLeft() throws {
        let base = Query("GameScore").order(by: "objectId")
        #expect(try F.run(base.offset(1).limit(.max)).objects.map(\.objectId) == ["s2", "s3", "s4", "s5", "s6"])
        #expect(try F.run(base.offset(.max).limit(.max)).objects.isEmpty)
        #expect(try F.run(base.offset(5).limit(Int.max - 4)).objects.map(\.objectId) == ["s6"])
    }

    @Test func pagesAfterOrderingAndCountsBeforePaging() throws {
        let base = Query("GameScore").order(by: "objectId")
        let page = try F.run(base.offset(1).limit(2))
        #expect(page.objects.map(\.objectId) == ["s2", "s3"])
        #expect(page.totalCount == 6)
        let beyond = try F.run(base.offset(10))
        #expect(beyond.objects.isEmpty && beyond.totalCount == 6)
        let none = try F.run(base.limit(0))
        #expect(none.objects.isEmpty && none.totalCount == 6)
        let filtered = try F.run(Query("GameScore").where(Field("score") > 5).limit(1))
        #expect(filtered.objects.map(\.objectId) == ["s1"] && filtered.totalCount == 3)
        // Unvalidated negative paging counts as 0 rather than trapping.
        let negative = try F.run(Query(className: "GameScore", limit: -1, offset: -3))
        #expect(negative.objects.isEmpty && negative.totalCount == 6)
    }

    @Test func onlyReadableObjectsOfTheClassAreCandidates() throws {
        let result = try F.run(Query("GameScore").where(Field("score").exists)) { $0.objectId != "s3" }
        #expect(result.objects.map(\.objectId) == ["s1", "s2", "s4", "s6"])
        #expect(result.totalCount == 4)
        // "Other"'s o1 has score 10 and name Sean but is never a GameScore result.
        #expect(try !Self.ids(Query("GameScore").where(Field("name") == "Sean")).contains("o1"))
        #expect(try Self.ids(Query("Other")) == ["o1"])
    }

    @Test func includesFollowPointersAndSkipUnreadableTargets() throws {
        let query = Query("GameScore").where(Field("score") == 10).including("author").including("author", "company")
        // s1 → u1 → c1; s2 → u2, which is unreadable: left out, and its company not reached.
        let result = try F.run(query)
        #expect(result.included.map(\.objectId) == ["c1", "u1"])
        #expect(result.included.map(\.className) == ["Company", "_User"])
        // When u2 is readable, it and its company are included too, sorted by class then ID.
        let everything = try F.run(query) { _ in true }
        #expect(everything.included.map(\.objectId) == ["c1", "c2", "u1", "u2"])
    }

    @Test func includesOnlyThePageAndSkipMissingTargets() throws {
        let base = Query("GameScore").order(by: "objectId").including("author")
        #expect(try F.run(base.limit(1)).included.map(\.objectId) == ["u1"])
        #expect(try F.run(base.offset(1).limit(1)).included.isEmpty)
        // s5's author u3 does not exist.
        #expect(try F.run(base.where(Field("objectId") == "s5")).included.isEmpty)
        // Non-pointer fields lead nowhere.
        #expect(try F.run(Query("GameScore").including("name").including("friends")).included.isEmpty)
    }

    @Test func includesAreDeduplicated() throws {
        let query = Query("GameScore").where(.thisIn(["s1"])).including("author").including("author")
            .including("author", "company")
        let included = try F.run(query).included
        #expect(included.map(\.objectId) == ["c1", "u1"])
    }
}
