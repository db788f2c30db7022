import Foundation
import PropertyBased
import RooftopShared

/// Random wire values for the schema property test: every value kind, with the encodings' edge
/// cases (non-finite and signed-zero doubles, extreme ints, odd strings, nested lists and JSON)
/// over-represented, and mutations carrying every field operation.
enum OpenAPIRandomValues {
    /// A batch of values and mutations: one Python run checks a whole batch.
    struct Batch: Sendable {
        var values: [Value]
        var mutations: [Mutation]
    }

    /// Batches of `size` values and `size / 3` mutations.
    static func batch(of size: Int) -> Generator<Batch, Shrink.None<Batch>> {
        Generator { rng in
            Batch(
                values: (0..<size).map { _ in value(&rng, depth: 2) },
                mutations: (0..<size / 3).map { _ in mutation(&rng) })
        }
    }

    private static let doubles: [Double] = [
        0, -0.0, 1, -1.5, 0.1, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity, -.infinity, .nan,
        9_007_199_254_740_992, 1e-300, 123_456.789e10,
    ]

    static func double<R: RandomNumberGenerator>(_ rng: inout R) -> Double {
        Bool.random(using: &rng) ? doubles.randomElement(using: &rng) ?? 0 : Double(bitPattern: rng.next())
    }

    static func string<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\0", "\u{7F}", "\"", "\\", "/", "é", "😀", "\u{FFFF}", "$"]
        return String(String.UnicodeScalarView((0..<Int.random(in: 0...6, using: &rng)).map { _ in pool.randomElement(using: &rng) ?? "a" }))
    }

    static func id<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let alphabet = Array("abcXYZ019._-+/=")
        return String((0..<Int.random(in: 1...5, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
    }

    static func json<R: RandomNumberGenerator>(_ rng: inout R, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int64(bitPattern: rng.next()))
        case 3:
            let value = double(&rng)
            return .double(value.isFinite ? value : 0.25)
        case 4: return .string(string(&rng))
        case 5: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in json(&rng, depth: depth - 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &rng) { members[string(&rng)] = json(&rng, depth: depth - 1) }
            return .object(members)
        }
    }

    static func value<R: RandomNumberGenerator>(_ rng: inout R, depth: Int) -> Value {
        switch Int.random(in: 0..<(depth > 0 ? 14 : 13), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int([Int64.min, .max, 0, Int64(bitPattern: rng.next())].randomElement(using: &rng) ?? 0)
        case 3: return .double(double(&rng))
        case 4: return .string(string(&rng))
        case 5: return .date(Timestamp(millisecondsSinceEpoch: Int64(bitPattern: rng.next())))
        case 6:
            let bytes = (0..<Int.random(in: 0...5, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            return .bytes(BinaryValue(Data(bytes), mimeType: Bool.random(using: &rng) ? "text/plain" : nil))
        case 7:
            let texts = ["0", "-0.0", "1.50", "+7", ".5", "5.", "123456789012345678901234567890.5", "1e-30", "-2E+5"]
            return (try? DecimalNumber(texts.randomElement(using: &rng) ?? "0")).map(Value.decimal) ?? .null
        case 8:
            let point = try? GeoPoint(
                latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
            return point.map(Value.geoPoint) ?? .null
        case 9: return .day(Day(daysSinceEpoch: Int64.random(in: -719_162...2_932_896, using: &rng)))
        case 10: return .pointer(Pointer(className: id(&rng), objectId: id(&rng)))
        case 11: return .relation(Relation(className: id(&rng), objectIds: (0..<Int.random(in: 0...3, using: &rng)).map { _ in id(&rng) }))
        case 12: return .json(json(&rng, depth: 2))
        default: return .list((0..<Int.random(in: 0...4, using: &rng)).map { _ in value(&rng, depth: depth - 1) })
        }
    }

    static func operation<R: RandomNumberGenerator>(_ rng: inout R) -> FieldOperation {
        let index = Int.random(in: 0...5, using: &rng)
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return .set(value(&rng, depth: 1))
        case 1: return .unset
        case 2: return .increment(Bool.random(using: &rng) ? .int(Int64.random(in: -9...9, using: &rng)) : .double(double(&rng)))
        case 3: return .listAppend((0..<Int.random(in: 0...3, using: &rng)).map { _ in value(&rng, depth: 1) })
        case 4: return .listInsert(index: index, value: value(&rng, depth: 1))
        case 5: return .listRemove(index: index)
        case 6: return .listMove(from: index, to: Int.random(in: 0...5, using: &rng))
        case 7: return .listReplace(index: index, value: value(&rng, depth: 1))
        case 8: return .relationAdd(className: id(&rng), objectIds: [id(&rng)])
        default: return .relationRemove(className: id(&rng), objectIds: [id(&rng), id(&rng)])
        }
    }

    static func mutation<R: RandomNumberGenerator>(_ rng: inout R) -> Mutation {
        var acl = ACL()
        acl.setReadAccess(Bool.random(using: &rng), for: .everyone)
        acl.setWriteAccess(true, for: .user(id(&rng)))
        let change: ObjectChange =
            Int.random(in: 0..<4, using: &rng) == 0
            ? .delete
            : .update(
                (0..<Int.random(in: 0...4, using: &rng)).map { _ in FieldUpdate(id(&rng), operation(&rng)) },
                acl: Bool.random(using: &rng) ? acl : nil)
        let datastores = [DatastoreID.app, .default, (try? DatastoreID(".Xy-3_")) ?? .app]
        return Mutation(
            datastore: datastores.randomElement(using: &rng) ?? .app, className: id(&rng), objectId: id(&rng),
            baseVersion: Bool.random(using: &rng) ? Int64.random(in: 0...100, using: &rng) : nil, change: change)
    }
}
