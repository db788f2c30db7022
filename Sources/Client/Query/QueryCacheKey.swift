import Foundation
import RooftopShared

/// The key a query's cached result is stored under: a stable hash of the query's canonical JSON
/// and its datastore.
///
/// Stable across runs and processes (the cache outlives them), so it is not `Hasher`: it is the
/// 64-bit FNV-1a hash of `<datastore>\n<query JSON with sorted keys>`, as 16 hex digits. The
/// scope is not part of it: cache rows are stored per scope already. Queries that differ in any
/// part — condition, order, page, includes — have different keys.
enum QueryCacheKey {
    /// The key of a query run in a datastore.
    /// - Throws: `illegalArgument` when the query cannot be encoded (a non-finite double in a
    ///   condition has no JSON form).
    static func hash(_ query: Query, in datastore: DatastoreID) throws(RooftopError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json: Data
        do {
            json = try encoder.encode(query)
        } catch {
            throw RooftopError(.illegalArgument, "the query cannot be encoded to be cached", cause: error)
        }
        var bytes = Array(datastore.rawValue.utf8)
        bytes.append(0x0A)
        bytes.append(contentsOf: json)
        return hex(fnv1a(bytes))
    }

    /// FNV-1a, 64 bits.
    static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// 16 lowercase hex digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
