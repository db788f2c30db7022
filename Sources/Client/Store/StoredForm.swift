import RooftopShared

/// How an object's row holds its two states, the server's and the local view (the row's
/// `local_is_server` column).
///
/// An object with nothing queued has one state, stored once (``localIsServer``). One with
/// changes queued has two, and the row holding both whole was twice as long as before its save:
/// in a full page (the pages an initial sync fills) the longer row no longer fits, and SQLite
/// rebalanced the page with its neighbours, writing four to six pages to the log for a save of one
/// field. The local view, which queries read, is therefore stored whole, and the server state
/// as what differs from it (``serverAsDelta``, a ``ServerDelta``): the row grows by a few
/// dozen bytes and stays on its page.
enum StoredForm: Int64, Sendable {
    /// Both whole: `server` and `local` (either may be `NULL`: an object created on the device
    /// and never saved has no server state; one deleted by a queued change has no view).
    case separate = 0
    /// One state: `server` holds it, `local` is `NULL`.
    case localIsServer = 1
    /// `local` holds the view whole, `server` a ``ServerDelta`` from it.
    case serverAsDelta = 2

    /// The form of a stored row's `local_is_server` value.
    /// - Throws: `cache` for a value no version of the store writes.
    init(stored value: Int64) throws(RooftopError) {
        guard let form = StoredForm(rawValue: value) else {
            throw RooftopError(.cache, "a stored object's row has an unknown form (\(value))")
        }
        self = form
    }

    /// The two states of a row, decoded from its texts in this form.
    /// - Throws: `cache` when a text is not what the form says it is.
    func states(server serverText: String?, local localText: String?, of key: ObjectKey)
        throws(RooftopError) -> (server: ObjectSnapshot?, local: ObjectSnapshot?)
    {
        let decode = { (text: String?) throws(RooftopError) -> ObjectSnapshot? in
            try text.map { text throws(RooftopError) in try StoredForm.snapshot(of: key, from: text) }
        }
        switch self {
        case .localIsServer:
            let server = try decode(serverText)
            return (server, server)
        case .separate:
            return (try decode(serverText), try decode(localText))
        case .serverAsDelta:
            guard let localText, let serverText else {
                throw RooftopError(.cache, "the stored object \(key) has a server state kept as a change without both texts")
            }
            let local = try StoredForm.snapshot(of: key, from: localText)
            let delta: ServerDelta
            do {
                delta = try ServerDelta.decodeDocument(serverText)
            } catch {
                throw RooftopError(.cache, "the stored server state of \(key) could not be read", cause: error)
            }
            return (delta.applied(to: local), local)
        }
    }

    /// The object stored as `text` (through ``SnapshotDecodeCache``).
    /// - Throws: `cache` when the text is not an object.
    static func snapshot(of key: ObjectKey, from text: String) throws(RooftopError) -> ObjectSnapshot {
        do {
            return try SnapshotDecodeCache.snapshot(from: text)
        } catch {
            throw RooftopError(.cache, "the stored object \(key) could not be read", cause: error)
        }
    }

    /// The form and texts a row stores for `server` and `local`; `serverText`, when given, is
    /// `server`'s text (a pulled page's, not encoded again).
    /// - Throws: What encoding throws (a value that cannot be encoded).
    static func texts(server: ObjectSnapshot?, local: ObjectSnapshot?, serverText: String? = nil) throws
        -> (form: StoredForm, server: String?, local: String?)
    {
        if let server, local == server {
            return (.localIsServer, try serverText ?? server.encodedDocument(), nil)
        }
        let localText = try local.map { try $0.encodedDocument() }
        if let server, let local, let delta = ServerDelta(server: server, view: local) {
            return (.serverAsDelta, try delta.encodedDocument(), localText)
        }
        return (.separate, try serverText ?? server.map { try $0.encodedDocument() }, localText)
    }
}

/// An object's server state as what differs from its local view (the view is the server state
/// with queued changes on top, which change fields and the ACL only): the server's value of each
/// field that differs, the fields the view has and the server state has not, and the server's
/// ACL when it differs.
struct ServerDelta: Codable, Equatable, Sendable {
    /// The server state's value of each field whose value differs, or the view has not.
    var fields: [String: Value] = [:]
    /// The view's fields the server state has not.
    var removed: [String] = []
    /// The server state's ACL, when it differs from the view's.
    var acl: ACL?
    /// Whether the server state has no ACL where the view has one.
    var aclRemoved: Bool = false

    /// The delta from `view` back to `server`; `nil` when they differ in more than fields and
    /// the ACL (their class, ID, datastore, dates or versions), which a delta does not hold.
    init?(server: ObjectSnapshot, view: ObjectSnapshot) {
        guard server.className == view.className, server.objectId == view.objectId,
            server.datastore == view.datastore, server.createdAt == view.createdAt,
            server.updatedAt == view.updatedAt, server.version == view.version,
            server.fieldVersions == view.fieldVersions
        else { return nil }
        // Values compare exactly (every bit of a double, every byte of a string) except the keys
        // of JSON objects, which compare as Swift strings do (canonically equivalent keys are
        // equal): a field holding JSON is kept in the delta, so the server's bytes come back.
        for (name, value) in server.fields where view.fields[name] != value || value.holdsJSON {
            fields[name] = value
        }
        removed = view.fields.keys.filter { server.fields[$0] == nil }.sorted()
        if server.acl != view.acl {
            if let acl = server.acl { self.acl = acl } else { aclRemoved = true }
        }
    }


    /// The server state: `view` with this delta applied.
    func applied(to view: ObjectSnapshot) -> ObjectSnapshot {
        var server = view
        for name in removed { server.fields[name] = nil }
        for (name, value) in fields { server.fields[name] = value }
        if let acl { server.acl = acl } else if aclRemoved { server.acl = nil }
        return server
    }

    private enum CodingKeys: String, CodingKey {
        case fields, removed, acl, aclRemoved
    }

    /// The delta's JSON as stored (its `Codable` form, written directly: a queued save writes
    /// one, and `JSONEncoder` took two fifths of storing the save's row).
    /// - Throws: What `JSONEncoder` throws for the values ``DocumentWriter`` leaves to it.
    func encodedDocument() throws -> String {
        var writer = DocumentWriter(capacity: 128)
        writer.raw("{")
        var first = true
        if let acl {
            writer.key("acl", first: first)
            writer.acl(acl)
            first = false
        }
        if aclRemoved {
            writer.key("aclRemoved", first: first)
            writer.bool(true)
            first = false
        }
        if !fields.isEmpty {
            writer.key("fields", first: first)
            try writer.fields(fields)
            first = false
        }
        if !removed.isEmpty {
            writer.key("removed", first: first)
            writer.strings(removed)
        }
        writer.raw("}")
        return writer.text
    }

    /// A stored delta, read directly when it can be (``DocumentReader``), else with `Codable`
    /// (deltas written by `JSONEncoder` read either way).
    /// - Throws: What `JSONDecoder` throws for text that is not a delta.
    static func decodeDocument(_ text: String) throws -> ServerDelta {
        try DocumentCoding.decode(ServerDelta.self, from: text, fast: read)
    }

    /// A delta read directly.
    /// - Throws: ``DocumentReader/Unhandled`` for what it leaves to `Codable`.
    static func read(_ reader: inout DocumentReader) throws -> ServerDelta {
        var delta = ServerDelta()
        try reader.readObject { reader, key in
            switch key {
            case "fields": delta.fields = try reader.readFields()
            case "removed": try reader.readArray { delta.removed.append(try $0.readString()) }
            case "acl": delta.acl = try reader.readNull() ? nil : try reader.readACL()
            case "aclRemoved": delta.aclRemoved = try reader.readBool()
            default: throw DocumentReader.Unhandled()
            }
        }
        return delta
    }

    private init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fields = try container.decodeIfPresent([String: Value].self, forKey: .fields) ?? [:]
        removed = try container.decodeIfPresent([String].self, forKey: .removed) ?? []
        acl = try container.decodeIfPresent(ACL.self, forKey: .acl)
        aclRemoved = try container.decodeIfPresent(Bool.self, forKey: .aclRemoved) ?? false
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !fields.isEmpty { try container.encode(fields, forKey: .fields) }
        if !removed.isEmpty { try container.encode(removed, forKey: .removed) }
        try container.encodeIfPresent(acl, forKey: .acl)
        if aclRemoved { try container.encode(true, forKey: .aclRemoved) }
    }
}

extension Value {
    /// Whether this is or holds a JSON value. Those are the values `==` holds equal while their
    /// stored forms differ (object keys compare as Swift strings; an integer and a double of the
    /// same value are equal, and their texts and index keys are not): what must be exact is
    /// never decided on them with `==`.
    var holdsJSON: Bool {
        switch self {
        case .json: true
        case .list(let items): items.contains(where: \.holdsJSON)
        default: false
        }
    }
}

extension ObjectSnapshot {
    /// Whether a field is or holds a JSON value (``Value/holdsJSON``).
    var holdsJSON: Bool { fields.values.contains(where: \.holdsJSON) }
}
