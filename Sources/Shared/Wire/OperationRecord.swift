/// One committed change of an object, kept so that a push based on an older version can be
/// merged field by field, and so that clients can fetch what changed since the version they
/// last saw to rebase their own pending changes.
public struct OperationRecord: Sendable, Hashable, Codable {
    /// The version the change produced.
    public var version: Int64
    /// The change as applied (after any merge).
    public var change: ObjectChange
    /// The value each changed field had before the change (`nil`: absent), so the fields at an
    /// older version can be recovered.
    public var priorValues: [String: Value?]
    /// An opaque tag of the push mutation that made the change (a hash of its idempotency scope
    /// and mutation ID), so that a client's later mutations in the same push can tell their own
    /// earlier changes from concurrent ones; `nil` for other writes.
    public var origin: String?

    /// Creates a record.
    public init(version: Int64, change: ObjectChange, priorValues: [String: Value?], origin: String? = nil) {
        self.version = version
        self.change = change
        self.priorValues = priorValues
        self.origin = origin
    }

    private enum CodingKeys: String, CodingKey { case version, change, priorValues, origin }

    /// A prior value with explicit presence: `{"value": v}` when the field held `v` (`null`
    /// included), `{}` when it was absent — a bare JSON `null` could not tell the two apart.
    private struct Prior: Codable {
        var value: Value?

        init(_ value: Value?) { self.value = value }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // Not a ternary: `nil` there would become `Value.null` (Value is nil-literal expressible).
            if container.contains(.value) {
                value = try container.decode(Value.self, forKey: .value)
            } else {
                value = Optional<Value>.none
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let value { try container.encode(value, forKey: .value) }
        }

        private enum CodingKeys: String, CodingKey { case value }
    }

    /// Decodes `{"version", "change", "priorValues": {"field": {"value": ...} | {}}, "origin"?}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int64.self, forKey: .version)
        change = try container.decode(ObjectChange.self, forKey: .change)
        priorValues = try container.decode([String: Prior].self, forKey: .priorValues).mapValues(\.value)
        origin = try container.decodeIfPresent(String.self, forKey: .origin)
    }

    /// Encodes `{"version", "change", "priorValues": {"field": {"value": ...} | {}}, "origin"?}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(change, forKey: .change)
        try container.encode(priorValues.mapValues(Prior.init), forKey: .priorValues)
        try container.encodeIfPresent(origin, forKey: .origin)
    }

    /// Whether `records` (oldest first) are every change after version `base` through at least
    /// `version`. Versions count up by one per change, so they must start right after `base` and
    /// follow each other; a list that does not lost changes (to the server's retention sweep).
    ///
    /// ```swift
    /// OperationRecord.complete(records, after: 3, through: 5)  // versions 4 and 5: true
    /// ```
    public static func complete(_ records: [OperationRecord], after base: Int64, through version: Int64) -> Bool {
        // Nothing is needed after a base at or past the version (`Int64.max` included).
        guard version > base else { return true }
        var expected = base + 1
        for record in records {
            guard record.version == expected else { return false }
            expected &+= 1
        }
        return expected > version
    }

    /// The fields at the version before the oldest of `records`, given the fields after the
    /// newest: each record's prior values are restored, newest first.
    public static func fields(before records: [OperationRecord], current: [String: Value]) -> [String: Value] {
        var fields = current
        for record in records.reversed() {
            for (field, prior) in record.priorValues { fields[field] = prior }
        }
        return fields
    }
}


/// The answer to `GET .../objects/{objectId}/operations`: an object's committed changes after a
/// version, oldest first.
public struct OperationList: Codable, Sendable, Hashable {
    /// The changes.
    public var operations: [OperationRecord]

    /// A list.
    public init(operations: [OperationRecord]) { self.operations = operations }
}
