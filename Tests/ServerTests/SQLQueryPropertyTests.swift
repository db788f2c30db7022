import PropertyBased
import RooftopShared
import Testing

@testable import RooftopServer
import RooftopTestSupport

/// Property tests of the two places where the SQL compiler turns a condition into byte-key
/// ranges: `startsWith` (a key range built from the prefix's key) and range comparisons on
/// numbers (the exact int/double key encoding). A fixed corpus is stored once; PropertyBased
/// draws the operands, far beyond the differential test's pools.
@Suite("SQL key ranges agree with the evaluator")
struct SQLQueryPropertyTests {
    /// Scalars whose UTF-8 forms are 1 to 4 bytes long, NUL and the highest scalar included.
    static let scalars: [Unicode.Scalar] = [
        "a", "b", "\0", "\u{7F}", "\u{80}", "é", "e", "\u{301}", "€", "\u{FFFF}", "😀", "\u{10FFFF}",
    ]

    static func text(_ scalars: [Unicode.Scalar]) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    @Test("startsWith matches exactly the strings whose UTF-8 starts with the prefix", arguments: StorageBackend.tested)
    func startsWith(backend: StorageBackend) async throws {
        var rng = SeededGenerator(seed: 11)
        let corpus = (0..<60).map { _ in Self.text((0..<rng.int(0...5)).map { _ in rng.pick(Self.scalars) }) }
        try await withStorage(backend.factory) { storage, _ in
            let (key, objects) = try await Self.store(corpus.map(Value.string), storage: storage)
            // Half the prefixes are cut from stored strings, so that many match.
            let prefixes = zip(
                Gen.bool, Gen.int(in: 0...(Self.scalars.count - 1)).map { Self.scalars[$0] }.array(of: 0...4),
                Gen.int(in: 0...59), Gen.int(in: 0...5)
            )
            .map { cut, scalars, index, length in
                cut ? Self.text(Array(corpus[index].unicodeScalars.prefix(length))) : Self.text(scalars)
            }
            await propertyCheck(count: 150, input: prefixes) { prefix in
                await recordingErrors {
                    let query = Query("T").where(Field("x").startsWith(prefix)).order(by: "x")
                    try await Self.expectAgreement(query, key: key, objects: objects, storage: storage)
                }
            }
        }
    }

    @Test("range comparisons on ints and doubles agree, across the two types", arguments: StorageBackend.tested)
    func numberRanges(backend: StorageBackend) async throws {
        var rng = SeededGenerator(seed: 12)
        let corpus: [Value] = (0..<80).map { _ in
            switch rng.int(0...3) {
            case 0: .int(Int64(bitPattern: rng.next()) >> rng.int(0...62))
            case 1: .double(Double(bitPattern: rng.next()))
            case 2:
                rng.chance(50) ? .int(rng.pick(DifferentialValues.ints)) : .double(rng.pick(DifferentialValues.doubles))
            default: .double(Double(Int64.random(in: -1000...1000, using: &rng)) / 4)
            }
        }
        try await withStorage(backend.factory) { storage, _ in
            let (key, objects) = try await Self.store(corpus, storage: storage)
            let operand = zip(
                Gen.int(in: 0...4), Gen.int64(in: .min ... .max), Gen.double(in: -1e20...1e20), Gen.int(in: 0...79)
            )
            .map { choice, int, double, index -> Value in
                switch choice {
                case 0: .int(int >> Int64(index % 63))
                case 1: .double(double)
                // A stored value itself, or its twin of the other type, to test the boundary.
                case 2: corpus[index]
                case 3: corpus[index].doubleValue.map { Value.int(Int64(exactly: $0.rounded()) ?? 0) } ?? .null
                default: corpus[index].intValue.map { Value.double(Double($0)) } ?? .double(.nan)
                }
            }
            let operators = Gen.int(in: 0...5).map { QueryPredicate.ComparisonOperator.allCases[$0] }
            await propertyCheck(count: 200, input: operand, operators) { value, op in
                await recordingErrors {
                    let query = Query("T").where(.comparison(field: "x", op: op, value: value)).order(
                        by: "x", descending: true)
                    try await Self.expectAgreement(query, key: key, objects: objects, storage: storage)
                }
            }
        }
    }

    /// Stores one object of class `T` per value, in field `x`; returns the datastore key and the
    /// stored objects.
    static func store(_ values: [Value], storage: any Storage) async throws -> (Int64, [ObjectSnapshot]) {
        let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
        var objects: [ObjectSnapshot] = []
        for (index, value) in values.enumerated() {
            let object = StorageConformance.object("o\(index)", fields: ["x": value])
            try await StorageWrites.put(object, datastoreKey: key, into: storage)
            objects.append(object)
        }
        return (key, objects)
    }

    /// Expects `find` and `count` to give the evaluator's answer.
    static func expectAgreement(
        _ query: Query, key: Int64, objects: [ObjectSnapshot], storage: any Storage,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let expected = QueryEvaluator.run(query, over: objects, lookup: { _ in nil }, canRead: { _ in true })
        let page = try await storage.find(query, datastoreKey: key, readers: nil, limit: 1_000)
        let count = try await storage.count(query, datastoreKey: key, readers: nil)
        let text = DifferentialCheck.render(query)
        #expect(
            page.objects.map(\.objectId) == expected.objects.map(\.objectId), "\(text)", sourceLocation: sourceLocation)
        #expect(
            page.totalCount == expected.totalCount && count == expected.totalCount, "\(text)",
            sourceLocation: sourceLocation)
    }
}
