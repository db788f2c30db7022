import Foundation
import RooftopShared
import Testing

/// The JSON wire forms of predicates, queries, requests and responses.
struct QueryJSONTests {
    @Test func predicateWireFormIsExact() throws {
        let predicate = Field("score") > 100 && (Field("tag").in(["a", "b"]) || !Field("name").exists)
        #expect(
            try QueryFixtures.encode(predicate)
                == #"{"and":[{"field":"score","op":">","value":100},{"or":[{"field":"tag","op":"in","values":["a","b"]},{"not":{"field":"name","op":"exists"}}]}]}"#
        )
    }

    @Test func everyConditionHasItsWireForm() throws {
        let point = try QueryFixtures.geo(1.5, -2)
        let cases: [(QueryPredicate, String)] = [
            (Field("s") != .double(2.5), #"{"field":"s","op":"!=","value":{"$double":"2.5"}}"#),
            (Field("s") <= .null, #"{"field":"s","op":"<=","value":null}"#),
            (Field("t").notIn([1]), #"{"field":"t","op":"notIn","values":[1]}"#),
            (Field("t").notExists, #"{"field":"t","op":"notExists"}"#),
            (Field("n").startsWith("Se"), #"{"field":"n","op":"startsWith","prefix":"Se"}"#),
            (Field("t").contains("a"), #"{"field":"t","op":"contains","value":"a"}"#),
            (Field("t").containsAll(["a"]), #"{"field":"t","op":"containsAll","values":["a"]}"#),
            (Field("p").near(point), #"{"field":"p","op":"near","point":{"latitude":1.5,"longitude":-2}}"#),
            (
                Field("p").near(point, maxDistanceMeters: 1000),
                #"{"field":"p","maxDistanceMeters":1000,"op":"near","point":{"latitude":1.5,"longitude":-2}}"#
            ),
            (
                Field("p").within(southwest: point, northeast: point),
                #"{"field":"p","northeast":{"latitude":1.5,"longitude":-2},"op":"withinBox","southwest":{"latitude":1.5,"longitude":-2}}"#
            ),
            (
                .thisIn(["a", .pointer(QueryFixtures.user("u1"))]),
                #"{"thisIn":["a",{"$pointer":{"className":"_User","objectId":"u1"}}]}"#
            ),
        ]
        for (predicate, json) in cases {
            #expect(try QueryFixtures.encode(predicate) == json)
            #expect(try QueryFixtures.decode(QueryPredicate.self, json) == predicate, "\(json)")
        }
    }

    @Test func queryWireFormIsExactAndOptionalKeysDefault() throws {
        let query = Query("GameScore").where(Field("score") > 1).order(by: "score", descending: true).limit(5).including("author")
        #expect(
            try QueryFixtures.encode(query)
                == #"{"className":"GameScore","includes":[["author"]],"limit":5,"offset":0,"order":[{"descending":true,"field":"score"}],"predicate":{"field":"score","op":">","value":1}}"#
        )
        #expect(try QueryFixtures.decode(Query.self, #"{"className":"T"}"#) == Query("T"))
        #expect(try QueryFixtures.decode(Query.self, #"{"className":"T","order":[{"field":"a"}]}"#) == Query("T").order(by: "a"))
    }

    @Test(arguments: [
        (#"{"field":"a","op":"~","value":1}"#, "unknown op '~'; expected one of = != < <= > >= in notIn exists notExists startsWith contains containsAll near withinBox"),
        (#"{"field":"a","op":">"}"#, "the '>' condition needs 'value'"),
        (#"{"field":"a","op":"in","value":[1]}"#, "the 'in' condition needs 'values'"),
        (#"{"field":"a","op":"exists","value":1}"#, "unexpected key 'value' in the 'exists' condition"),
        (#"{"field":"a"}"#, "the condition on 'a' needs an 'op'"),
        (#"{"and":[],"or":[]}"#, "'and' cannot share a predicate with other keys; found 'or'"),
        (#"{"score":5}"#, "a predicate needs one of the keys 'and', 'or', 'not', 'thisIn' or 'field'; found 'score'"),
        (#"{"thisIn":[5]}"#, "a 'thisIn' element must be an object ID string or a {\"$pointer\": ...}, not an int"),
    ])
    func predicateDecodingErrorsSayWhatIsWrong(json: String, message: String) {
        #expect {
            try QueryFixtures.decode(QueryPredicate.self, json)
        } throws: { error in
            QueryFixtures.decodingMessage(error) == message
        }
    }

    @Test func queryDecodingRefusesUnknownKeys() {
        #expect {
            try QueryFixtures.decode(Query.self, #"{"className":"T","limt":5}"#)
        } throws: { error in
            QueryFixtures.decodingMessage(error).hasPrefix("unexpected key 'limt' in a query")
        }
    }

    @Test func deeplyNestedJSONIsRefusedWithoutCrashing() {
        let json = String(repeating: #"{"not":"#, count: 300) + #"{"field":"a","op":"exists"}"# + String(repeating: "}", count: 300)
        #expect(throws: DecodingError.self) { try QueryFixtures.decode(QueryPredicate.self, json) }
    }

    @Test func queryRequestHasTwoWireForms() throws {
        let text = QueryRequest.text(className: "GameScore", text: "where score > ? order by score desc", parameters: [100])
        #expect(
            try QueryFixtures.encode(text)
                == #"{"className":"GameScore","parameters":[100],"text":"where score > ? order by score desc"}"#)
        let ast = QueryRequest.query(Query("GameScore").where(Field("score") > 100))
        #expect(
            try QueryFixtures.encode(ast)
                == #"{"query":{"className":"GameScore","includes":[],"offset":0,"order":[],"predicate":{"field":"score","op":">","value":100}}}"#
        )
        #expect(try QueryFixtures.decode(QueryRequest.self, QueryFixtures.encode(text)) == text)
        #expect(try QueryFixtures.decode(QueryRequest.self, QueryFixtures.encode(ast)) == ast)
        #expect(
            try QueryFixtures.decode(QueryRequest.self, #"{"className":"T","text":"limit 1"}"#)
                == .text(className: "T", text: "limit 1", parameters: []))
        // Both forms name the same query.
        #expect(try text.makeQuery().predicate == ast.makeQuery().predicate)
    }

    @Test func queryRequestRefusesMixedOrMissingForms() {
        #expect(throws: DecodingError.self) {
            try QueryFixtures.decode(QueryRequest.self, #"{"query":{"className":"T"},"text":"limit 1"}"#)
        }
        #expect(throws: DecodingError.self) { try QueryFixtures.decode(QueryRequest.self, #"{"className":"T"}"#) }
    }

    @Test func validatedQueryParsesAndValidates() throws {
        let ok = QueryRequest.text(className: "T", text: "where a > ?", parameters: [1])
        #expect(try ok.validatedQuery() == Query("T").where(Field("a") > 1))
        let hostile = QueryRequest.query(Query("T").where(Field("a; DROP TABLE t") == 1))
        #expect(throws: RooftopError.self) { try hostile.validatedQuery() }
        let unparsable = QueryRequest.text(className: "T", text: "where", parameters: [])
        #expect(throws: RooftopError.self) { try unparsable.validatedQuery() }
    }

    @Test func queryResponseRoundTripsTheResult() throws {
        let result = try QueryFixtures.run(Query("GameScore").where(Field("score") == 10).including("author"))
        let json = try QueryFixtures.encode(result)
        let decoded = try QueryFixtures.decode(QueryResponse.self, json)
        #expect(decoded == result)
        #expect(decoded.totalCount == 2 && decoded.included.map(\.objectId) == ["u1"])
        let minimal = try QueryFixtures.decode(QueryResponse.self, #"{"objects":[],"totalCount":0}"#)
        #expect(minimal.included.isEmpty && minimal.totalCount == 0)
    }
}
