import RooftopShared

/// An operation as `object_operations` keeps it, on both backends: ``OperationRecord``'s own
/// form, or for an object's first creation a shorter one.
///
/// A first creation's record says only which fields it created (each absent before it) and
/// whose mutation it was: nothing merges over it (no base version precedes it), so its change is
/// kept as no updates (``ObjectStorePlan``). In ``OperationRecord``'s form that is
/// `{"version":1,"change":{"update":[]},"priorValues":{"n":{},"name":{},…},"origin":"…"}`, about
/// 160 bytes on a five-field object, a sixth of what a small record costs on disk; stored as
/// `{"version":1,"created":["n","name",…],"origin":"…"}` it is about 40 bytes shorter. Either
/// form reads back as the same record, so rows written before the short form existed are read
/// as they are.
///
/// ```swift
/// let text = try StoredOperation.text(record, firstCreation: true)
/// try StoredOperation.record(from: text) == record  // true
/// ```
enum StoredOperation {
    /// The text `record` is stored as: the short form when it is an object's first creation (a
    /// change of no updates, every prior value absent), ``OperationRecord``'s otherwise.
    /// - Throws: What encoding the record throws.
    static func text(_ record: OperationRecord, firstCreation: Bool) throws -> String {
        guard firstCreation, case .update(let updates, let acl) = record.change, updates.isEmpty, acl == nil,
            record.priorValues.values.allSatisfy({ $0 == nil })
        else { return try record.encodedDocument() }
        var writer = DocumentWriter(capacity: 128)
        writer.raw("{\"version\":")
        writer.int(record.version)
        writer.raw(",\"created\":")
        writer.strings(record.priorValues.keys.sorted())
        if let origin = record.origin {
            writer.raw(",\"origin\":")
            writer.string(origin)
        }
        writer.raw("}")
        return writer.text
    }

    /// The record stored as `text`, in either form.
    /// - Throws: What decoding throws for text that is neither form.
    static func record(from text: String) throws -> OperationRecord {
        try DocumentCoding.decode(Form.self, from: text).record
    }

    /// Either form, told apart by `created`.
    private struct Form: Decodable {
        var record: OperationRecord

        private enum CodingKeys: String, CodingKey { case version, created, origin }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let created = try container.decodeIfPresent([String].self, forKey: .created) else {
                record = try OperationRecord(from: decoder)
                return
            }
            // Not `uniqueKeysWithValues`: a damaged row naming a field twice must not trap.
            let prior = Dictionary(created.map { ($0, Value?.none) }, uniquingKeysWith: { first, _ in first })
            record = OperationRecord(
                version: try container.decode(Int64.self, forKey: .version), change: .update([]), priorValues: prior,
                origin: try container.decodeIfPresent(String.self, forKey: .origin))
        }
    }
}
