import Foundation
import PropertyBased
import RooftopShared
import Testing
import RooftopTestSupport

/// Properties over random predicates, objects and queries.
struct QueryPropertyTests {
    @Test func notIsTheExactComplement() async {
        await propertyCheck(count: 500, input: QueryGen.predicate, QueryGen.object) { predicate, object in
            #expect(QueryEvaluator.matches(object, .not(predicate)) == !QueryEvaluator.matches(object, predicate))
        }
    }

    @Test func negativeConditionsComplementTheirPositives() async {
        await propertyCheck(count: 500, input: QueryGen.object, QueryGen.field, QueryGen.value, QueryGen.values) {
            object, field, value, values in
            func matches(_ predicate: QueryPredicate) -> Bool { QueryEvaluator.matches(object, predicate) }
            #expect(matches(Field(field) != value) == !matches(Field(field) == value))
            #expect(matches(Field(field).notIn(values)) == !matches(Field(field).in(values)))
            #expect(matches(Field(field).notExists) == !matches(Field(field).exists))
            // On a present field, '<' and '>=' are complements; on a missing one both fail.
            let present = object[field] != nil
            #expect(matches(Field(field) < value) == (present && !matches(Field(field) >= value)))
            #expect(matches(Field(field) > value) == (present && !matches(Field(field) <= value)))
        }
    }

    @Test func deMorganHolds() async {
        await propertyCheck(count: 300, input: QueryGen.predicate, QueryGen.predicate, QueryGen.object) { p, q, object in
            let lhs = QueryEvaluator.matches(object, .not(.and([p, q])))
            let rhs = QueryEvaluator.matches(object, .or([.not(p), .not(q)]))
            #expect(lhs == rhs)
        }
    }

    /// The server compiles comparisons to byte comparisons of sort keys; both must agree.
    @Test func comparisonsAgreeWithSortKeys() async {
        await propertyCheck(count: 500, input: QueryGen.object, QueryGen.value) { object, value in
            for field in QueryGen.fields {
                for op in QueryPredicate.ComparisonOperator.allCases {
                    let expected: Bool
                    if let present = object[field] {
                        let bytes = present.sortKey.lexicographicallyPrecedes(value.sortKey)
                            ? -1 : (present.sortKey == value.sortKey ? 0 : 1)
                        expected = op.accepts(comparison: bytes)
                    } else {
                        expected = op == .notEqual
                    }
                    #expect(QueryEvaluator.matches(object, .comparison(field: field, op: op, value: value)) == expected)
                }
            }
        }
    }

    @Test func jsonRoundTripGivesAnEqualQuery() async {
        await propertyCheck(count: 300, input: QueryGen.query) { query in
            recordingErrors {
                let json = try QueryFixtures.encode(query)
                #expect(try QueryFixtures.decode(Query.self, json) == query, "json: \(json)")
            }
        }
    }

    @Test func textRoundTripGivesAnEqualQuery() async {
        await propertyCheck(count: 300, input: QueryGen.query) { query in
            recordingErrors {
                try query.validate(maxDepth: .max)
                let form = try query.textForm
                let parsed = try Query.parse(className: query.className, text: form.text, parameters: form.parameters)
                #expect(parsed == query, "text: \(form.text)")
            }
        }
    }

    @Test func runIsDeterministicAndOrderIndependent() async {
        await propertyCheck(count: 100, input: QueryGen.query, QueryGen.object.array(of: 0...12)) { query, objects in
            // Distinct IDs, as in a real store.
            var seen = Set<String>()
            let unique = objects.filter { seen.insert($0.objectId).inserted }
            let run = { (input: [ObjectSnapshot]) in
                QueryEvaluator.run(query, over: input, lookup: { _ in nil }, canRead: { _ in true })
            }
            let forward = run(unique)
            #expect(run(unique.reversed()) == forward)
            let matching = unique.filter { object in query.predicate.map { QueryEvaluator.matches(object, $0) } ?? true }
            #expect(forward.totalCount == matching.count)
            #expect(forward.objects.count == min(max(matching.count - query.offset, 0), query.limit ?? .max))
        }
    }
}
