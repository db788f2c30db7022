import RooftopSQL
import RooftopShared

/// What storing an object writes that depends on the object alone: its stored text and its index
/// rows. A pull works these out for a batch of pulled objects while the batch before is being
/// written (``SyncEngine/prepare(_:objectTexts:valueIndexed:)``), so that the one writer only binds and steps.
struct PreparedObject: Sendable {
    /// The object, as pulled.
    let snapshot: ObjectSnapshot
    /// Its stored JSON.
    let text: String
    /// Its `object_fields` and `object_elements` rows (none replaced): of the fields in
    /// ``rowFields`` and the built-in ones.
    private let rows: SQLIndexRows.Change
    /// The fields ``rows`` cover besides the built-in ones; `nil` for every field.
    let rowFields: Set<String>?
    /// Who may read it (its reader set, ``StoreTransaction/readerSet(_:)``).
    let readers: Set<String>

    /// The preparation of `snapshot`, stored as `text` when given: its JSON as received, which
    /// reads back as `snapshot` (``PullResponse/decodeDocumentWithObjectTexts(_:)``), so that it
    /// is not encoded again.
    /// - Parameter fields: The fields to work out rows of, besides the built-in ones: those of
    ///   the class's value indexes (``StoreTransaction/valueIndexedFields(of:_:)``), which are
    ///   all the store keeps; `nil` (the default) for every field. A 420-letter text, say, is not
    ///   worked into a key only to be dropped.
    /// - Throws: What encoding it throws.
    init(_ snapshot: ObjectSnapshot, text: String? = nil, fields: Set<String>? = nil) throws {
        self.snapshot = snapshot
        self.text = try text ?? snapshot.encodedDocument()
        rows = StoreTransaction.keptRows(of: snapshot, fields)
        rowFields = fields
        readers = SQLIndexRows.readers(of: snapshot.acl)
    }

    /// The rows, when they cover the fields `valueIndexed` (`nil`: every field) whose rows a
    /// store keeps; `nil` when not (a declaration changed after the preparation): the writer
    /// works them out then.
    func rows(covering valueIndexed: Set<String>?) -> SQLIndexRows.Change? {
        guard let rowFields else { return rows }
        guard let valueIndexed, valueIndexed.isSubset(of: rowFields) else { return nil }
        return rows
    }
}
