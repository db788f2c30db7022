/// The fixed limits a server enforces, served to clients (``ServerInfo/limits``) so that they
/// can refuse an oversized change before queueing it.
///
/// Defaults follow the Dropbox Datastore API where it has a number (record 100 KiB, 100,000 records and 10 MiB per
/// datastore, 2 MiB per sync call); the others are Rooftop's choices, explained on each member.
/// Sizes are in bytes and counted as ``SizeAccounting`` says, not as JSON text. Breaking a limit
/// is a ``RooftopError/Code/sizeLimit`` error (see the `check…` methods), never a silent
/// truncation.
///
/// Wire form: every member by name, e.g. `{"maxRecordBytes": 102400, "maxRecordsPerDatastore":
/// 100000, ...}`. Missing members decode as their defaults and unknown ones are ignored, so
/// clients and servers of different versions understand each other.
///
/// ```swift
/// var limits = Limits()
/// limits.maxRecordBytes = 64 * 1024
/// try limits.checkRecord(snapshot)   // throws sizeLimit when the record is over 64 KiB
/// ```
public struct Limits: Hashable, Sendable {
    /// The largest record (``SizeAccounting/recordSize(fields:)``). Default 100 KiB (as in the Dropbox Datastore API).
    public var maxRecordBytes: Int = 100 * 1024
    /// The most records one datastore may hold. Default 100,000 (as in the Dropbox Datastore API).
    public var maxRecordsPerDatastore: Int = 100_000
    /// The largest datastore (``SizeAccounting/datastoreSize(recordSizes:)``). Default 10 MiB
    /// (as in the Dropbox Datastore API).
    public var maxDatastoreBytes: Int = 10 * 1024 * 1024
    /// The largest push, one sync call's changes (``SizeAccounting/pushSize(_:)``). Default 2 MiB
    /// (as in the Dropbox Datastore API).
    public var maxPushBytes: Int = 2 * 1024 * 1024
    /// The largest HTTP request body, as raw bytes. Default 8 MiB: a full 2 MiB push grows on the
    /// wire (JSON syntax, field names, base64 for bytes, escapes in strings), so the body limit
    /// sits well above ``maxPushBytes`` and only stops bodies no valid request needs.
    public var maxRequestBodyBytes: Int = 8 * 1024 * 1024
    /// The deepest nesting of lists and JSON arrays or objects in one field value (a scalar is
    /// depth 0, `[1]` depth 1, `[[1]]` depth 2). Default 32: deeper values are almost always
    /// mistakes or attacks on recursive decoders. A server's body parser should allow this plus
    /// the few levels of the request envelope (see ``maxRequestNestingDepth``).
    public var maxNestingDepth: Int = 32
    /// The largest `limit` a query may ask for. Default 1000 (Parse's maximum): larger result sets
    /// are paged.
    public var maxQueryLimit: Int = 1000
    /// The `limit` of a query that names none. Default 100 (Parse's default).
    public var defaultQueryLimit: Int = 100
    /// The most mutations in one push. Default 500: it bounds the work of one server transaction
    /// (a push of tiny changes could otherwise carry 20,000 of them within 2 MiB).
    public var maxMutationsPerPush: Int = 500
    /// The most changes a pull may ask for in one page. Default 1000.
    public var maxPullPageSize: Int = 1000
    /// The page size of a pull that names none. Default 500.
    public var defaultPullPageSize: Int = 500
    /// The bytes after which a server ends a pull page early (it always returns at least one
    /// change), so that a page of large records does not hold hundreds of MiB in memory: its
    /// objects' stored bodies (fields, ACL, field versions, as JSON), class names and IDs.
    /// Default 4 MiB.
    public var maxPullPageBytes: Int = 4 * 1024 * 1024

    /// The defaults (see each member).
    public init() {}

    /// The default limits.
    public static let `default` = Limits()

    /// How deeply a request body may nest: ``maxNestingDepth`` plus 16 levels for the request's
    /// own structure (request, mutation, change, update, operation, value tags).
    public var maxRequestNestingDepth: Int { maxNestingDepth + 16 }

    /// The largest value any limit may take: 2⁴⁰ (a terabyte, or a trillion records).
    public static let largestLimit = 1 << 40

    /// The deepest nesting a limit may allow.
    public static let largestNestingDepth = 1000

    /// Checks that the limits make sense, e.g. after reading them from a configuration file.
    /// - Throws: ``RooftopError/Code/illegalArgument`` naming the first member that is not
    ///   positive or above ``largestLimit`` (``largestNestingDepth`` for the nesting depth), or a
    ///   default that is above its maximum.
    public func validate() throws(RooftopError) {
        let members: [(String, Int)] = [
            ("maxRecordBytes", maxRecordBytes), ("maxRecordsPerDatastore", maxRecordsPerDatastore),
            ("maxDatastoreBytes", maxDatastoreBytes), ("maxPushBytes", maxPushBytes),
            ("maxRequestBodyBytes", maxRequestBodyBytes), ("maxNestingDepth", maxNestingDepth),
            ("maxQueryLimit", maxQueryLimit), ("defaultQueryLimit", defaultQueryLimit),
            ("maxMutationsPerPush", maxMutationsPerPush), ("maxPullPageSize", maxPullPageSize),
            ("defaultPullPageSize", defaultPullPageSize), ("maxPullPageBytes", maxPullPageBytes),
        ]
        for (name, value) in members where value < 1 {
            throw RooftopError(.illegalArgument, "limit \(name) must be at least 1, not \(value)", field: name)
        }
        // Upper bounds keep every sum and product the server makes of limits and input far
        // inside `Int` (a page size plus one, a depth plus the request's own levels, sizes added up).
        for (name, value) in members where value > Limits.largestLimit {
            throw RooftopError(
                .illegalArgument, "limit \(name) must be at most \(Limits.largestLimit), not \(value)", field: name)
        }
        if maxNestingDepth > Limits.largestNestingDepth {
            throw RooftopError(
                .illegalArgument, "limit maxNestingDepth must be at most \(Limits.largestNestingDepth)",
                field: "maxNestingDepth")
        }
        if defaultQueryLimit > maxQueryLimit {
            throw RooftopError(
                .illegalArgument, "defaultQueryLimit (\(defaultQueryLimit)) is above maxQueryLimit (\(maxQueryLimit))",
                field: "defaultQueryLimit")
        }
        if defaultPullPageSize > maxPullPageSize {
            throw RooftopError(
                .illegalArgument,
                "defaultPullPageSize (\(defaultPullPageSize)) is above maxPullPageSize (\(maxPullPageSize))",
                field: "defaultPullPageSize")
        }
    }
}

extension Limits: Codable {
    private enum CodingKeys: String, CodingKey {
        case maxRecordBytes, maxRecordsPerDatastore, maxDatastoreBytes, maxPushBytes, maxRequestBodyBytes
        case maxNestingDepth, maxQueryLimit, defaultQueryLimit, maxMutationsPerPush, maxPullPageSize
        case defaultPullPageSize, maxPullPageBytes
    }

    /// Decodes the limits; a missing member keeps its default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        func read(_ key: CodingKeys, into value: inout Int) throws {
            if let decoded = try container.decodeIfPresent(Int.self, forKey: key) { value = decoded }
        }
        try read(.maxRecordBytes, into: &maxRecordBytes)
        try read(.maxRecordsPerDatastore, into: &maxRecordsPerDatastore)
        try read(.maxDatastoreBytes, into: &maxDatastoreBytes)
        try read(.maxPushBytes, into: &maxPushBytes)
        try read(.maxRequestBodyBytes, into: &maxRequestBodyBytes)
        try read(.maxNestingDepth, into: &maxNestingDepth)
        try read(.maxQueryLimit, into: &maxQueryLimit)
        try read(.defaultQueryLimit, into: &defaultQueryLimit)
        try read(.maxMutationsPerPush, into: &maxMutationsPerPush)
        try read(.maxPullPageSize, into: &maxPullPageSize)
        try read(.defaultPullPageSize, into: &defaultPullPageSize)
        try read(.maxPullPageBytes, into: &maxPullPageBytes)
    }

    /// Encodes every member.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(maxRecordBytes, forKey: .maxRecordBytes)
        try container.encode(maxRecordsPerDatastore, forKey: .maxRecordsPerDatastore)
        try container.encode(maxDatastoreBytes, forKey: .maxDatastoreBytes)
        try container.encode(maxPushBytes, forKey: .maxPushBytes)
        try container.encode(maxRequestBodyBytes, forKey: .maxRequestBodyBytes)
        try container.encode(maxNestingDepth, forKey: .maxNestingDepth)
        try container.encode(maxQueryLimit, forKey: .maxQueryLimit)
        try container.encode(defaultQueryLimit, forKey: .defaultQueryLimit)
        try container.encode(maxMutationsPerPush, forKey: .maxMutationsPerPush)
        try container.encode(maxPullPageSize, forKey: .maxPullPageSize)
        try container.encode(defaultPullPageSize, forKey: .defaultPullPageSize)
        try container.encode(maxPullPageBytes, forKey: .maxPullPageBytes)
    }
}
