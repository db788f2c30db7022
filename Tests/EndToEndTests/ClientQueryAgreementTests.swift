import Foundation
import GRDB
import RooftopShared
import Testing

@testable import Rooftop

/// The same queries run on the server (its SQL), in the client's local datastore (the same
/// compiler over the local index) and in the shared evaluator over the objects give the same
/// objects in the same order and the same total count, over values of every kind, with mixed
/// numbers, missing fields and ties: chosen queries, then random ones. The class declares
/// compound indexes, which the client learns when it pulls: local queries whose order one has
/// read it.
@Suite("Client queries: remote, local and the evaluator agree", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientQueryAgreementTests {
    @Test("conditions, orders and pages agree between the server, the local datastore and the evaluator")
    func remoteAndLocalAgree() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("agree")
        let className = Unique.name("Mixed")
        let indexes = [["i"], ["n", "i"], ["s", "i"], ["flag", "i"], ["n"], ["at"]]
        try await api.setClass(className, indexes: indexes)
        let rows = try ClientQueryAgreementTests.rows()
        try await ClientQueryFixture.withClient(server, as: user) { writer async throws in
            for fields in rows {
                let object = writer.object(className)
                for (name, value) in fields { object[name] = value }
                try await object.save()
            }
        }
        let file = ClientQueryFixture.cacheFile()
        try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { client async throws in
            let everything = try await client.query(className).limit(1000).find(policy: .remoteAndStore)
            #expect(everything.objects.count == rows.count)
            let states = everything.objects.map(\.snapshot)
            // The pull learns the class's indexes, and builds their entries.
            try await client.sync.pull(datastore: everything.objects.first?.datastore ?? .app)
            let (declared, entries) = try client.core.store.read { db in
                (
                    try LocalStore.declaredIndexes(of: className, db).values.sorted { "\($0)" < "\($1)" },
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM index_entries") ?? 0
                )
            }
            #expect(declared == indexes.sorted { "\($0)" < "\($1)" })
            #expect(entries == indexes.count * rows.count)
            let chosen = try ClientQueryAgreementTests.queries(className)
            var random = RandomQueries(seed: 0x3A9)
            let drawn = (0..<60).map { _ in random.query(className) }
            var selective = 0
            var drawnSelective = 0
            for (index, query) in (chosen + drawn).enumerated() {
                let remote = try await client.query(query).find()
                if (1..<rows.count).contains(remote.totalCount) {
                    if index < chosen.count { selective += 1 } else { drawnSelective += 1 }
                }
                let local = try await client.query(query).fromLocalDatastore().find()
                let evaluated = QueryEvaluator.run(query, over: states, lookup: { _ in nil }, canRead: { _ in true })
                #expect(remote.objectIds == local.objectIds, "query \(index): \(query)")
                #expect(remote.objectIds == evaluated.objects.map(\.objectId), "query \(index) evaluated: \(query)")
                #expect(remote.totalCount == local.totalCount, "query \(index) total: \(query)")
                #expect(remote.totalCount == evaluated.totalCount, "query \(index) evaluated total: \(query)")
                let remoteCount = try await client.query(query).count()
                #expect(remoteCount == remote.totalCount, "query \(index) count: \(query)")
                #expect(try await client.query(query).fromLocalDatastore().count() == remote.totalCount, "query \(index) local count")
            }
            // The conditions pick some objects and leave others (the orders and pages keep all).
            #expect(selective >= 27, "only \(selective) of \(chosen.count) queries select some of the objects")
            #expect(drawnSelective >= 20, "only \(drawnSelective) of \(drawn.count) random queries select some of the objects")
        }
    }

    /// Objects with a number `n` (ints and doubles, -0.0, infinities, a missing one), a string
    /// `s`, a list `tags`, a date `at`, a day, a decimal, a geo point and a flag.
    static func rows() throws -> [[String: Value]] {
        let numbers: [Value?] = [
            .int(1), .double(1.0), .double(2.5), .double(-0.0), .int(0), .int(3), .int(.max), .int(-7),
            .double(.infinity), .double(-.infinity), nil, .double(0.1), .int(2), .string("10"), .null,
        ]
        let strings: [Value?] = ["a", "B", "é", "ab", "", "a\u{0}", nil, "Z", "zz", "ä", "a", .int(5), "ab", "b", "aa"]
        var rows: [[String: Value]] = []
        for index in numbers.indices {
            var fields: [String: Value] = ["i": .int(Int64(index))]
            if let number = numbers[index] { fields["n"] = number }
            if let string = strings[index % strings.count] { fields["s"] = string }
            fields["tags"] = .list(Array(["x", "y", "z", "x"].prefix(index % 4)).map(Value.string))
            fields["at"] = .date(Timestamp(millisecondsSinceEpoch: Int64((index * 7919) % 13) * 86_400_000 - 3_000))
            fields["day"] = .day(try Day(year: 2024, month: 1 + index % 12, day: 1 + index % 28))
            fields["dec"] = .decimal(try DecimalNumber(["0.1", "0.10", "-3", "12345678901234567890.5", "2"][index % 5]))
            fields["geo"] = .geoPoint(try GeoPoint(latitude: Double(index % 5) * 10 - 20, longitude: Double(index % 7) * 20 - 60))
            if index % 3 == 0 { fields["flag"] = .bool(index % 2 == 0) }
            rows.append(fields)
        }
        return rows
    }

    /// Queries over the rows' fields.
    static func queries(_ className: String) throws -> [Query] {
        let base = Query(className)
        let predicates: [QueryPredicate] = [
            Field("n") > 0, Field("n") >= 1, Field("n") == 1, Field("n") != 1, Field("n") < 0, Field("n") == 0,
            Field("n") == .double(2.5), Field("n").in([1, 3, "10"]), Field("n").notIn([1, 0]),
            Field("n").exists, Field("n").notExists, Field("n") > .double(-.infinity),
            Field("s").startsWith("a"), Field("s") > "a", Field("s") == "", Field("s") < "b",
            Field("tags").contains("x"), Field("tags").containsAll(["x", "y"]), Field("tags") == .list([]),
            Field("at") > .date(Timestamp(millisecondsSinceEpoch: 86_400_000 * 5)),
            Field("day") >= .day(try Day(year: 2024, month: 6, day: 1)),
            Field("dec") == .decimal(try DecimalNumber("0.1")), Field("dec") > 1,
            Field("geo").near(try GeoPoint(latitude: 0, longitude: 0), maxDistanceMeters: 3_000_000),
            Field("geo").within(southwest: try GeoPoint(latitude: -15, longitude: -50), northeast: try GeoPoint(latitude: 15, longitude: 30)),
            Field("flag") == true, Field("flag") != true,
            (Field("n") > 0 && Field("s").startsWith("a")) || Field("flag") == false,
            .not(Field("n") >= 1),
        ]
        var queries = predicates.map { base.where($0) }
        queries += [
            base.order(by: "n"), base.order(by: "n", descending: true), base.order(by: "s").order(by: "n", descending: true),
            base.order(by: "tags"), base.order(by: "at", descending: true).limit(4).offset(2), base.order(by: "dec"),
            base.order(by: "day", descending: true), base.order(by: "flag").order(by: "i"), base.order(by: "geo"),
            base.where(Field("n") > 0).order(by: "n").limit(3).offset(1), base.limit(5).offset(12),
            base.where(Field("geo").near(try GeoPoint(latitude: 10, longitude: 20))).limit(6),
        ]
        return queries
    }
}

/// Random queries over the agreement rows' fields: conditions of every operator on `n`, `s`,
/// `tags`, `flag` and `i` (values of several kinds, so that kinds are compared across), nested in
/// `and`, `or` and `not`, with random orders, offsets and limits.
struct RandomQueries {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    private mutating func next(_ bound: Int) -> Int {
        // SplitMix64: the same queries on every run.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }

    private mutating func value() -> Value {
        let values: [Value] = [.int(0), .int(1), .int(3), .double(2.5), .double(-0.0), "a", "ab", "B", "", "10", .bool(true), .null]
        return values[next(values.count)]
    }

    private mutating func condition() -> QueryPredicate {
        let field = ["n", "s", "flag", "i"][next(4)]
        switch next(8) {
        case 0: return .in(field: field, values: (0...next(3)).map { _ in value() })
        case 1: return next(2) == 0 ? Field(field).exists : Field(field).notExists
        case 2: return Field("tags").contains(["x", "y", "z", "w"][next(4)])
        case 3: return Field("s").startsWith(["a", "", "B", "é"][next(4)])
        default:
            let ops: [QueryPredicate.ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
            return .comparison(field: field, op: ops[next(ops.count)], value: value())
        }
    }

    private mutating func predicate(depth: Int = 0) -> QueryPredicate {
        guard depth < 2 else { return condition() }
        switch next(5) {
        case 0: return .and([predicate(depth: depth + 1), predicate(depth: depth + 1)])
        case 1: return .or([predicate(depth: depth + 1), predicate(depth: depth + 1)])
        case 2: return .not(predicate(depth: depth + 1))
        default: return condition()
        }
    }

    /// A random query of `className`.
    mutating func query(_ className: String) -> Query {
        var query = Query(className).where(predicate())
        for _ in 0..<next(3) {
            query = query.order(by: ["n", "s", "i", "flag", "tags"][next(5)], descending: next(2) == 0)
        }
        // A unique last key: ties are broken the same way everywhere only with one.
        query = query.order(by: "i")
        if next(3) == 0 { query = query.offset(next(5)) }
        if next(2) == 0 { query = query.limit(1 + next(8)) }
        return query
    }
}
