import RooftopShared

/// A page of the change feed as the server sends it: ``PullResponse``, except that an upsert
/// carries the object as stored (``FeedObject``), whose body goes out as the stored JSON text,
/// never decoded and encoded again.
struct PullPage: Sendable {
    /// One change of the page.
    enum Change: Sendable {
        /// A readable object, sent as stored.
        case upsert(FeedObject)
        /// A tombstone or a removal.
        case notice(PullChange)
    }

    var changes: [Change]
    var checkpoint: Checkpoint
    var hasMore: Bool
    var remaining: Int?
    var roles: [String]?

    /// What the page's document takes, about: its stored bodies and each change's envelope, so
    /// that the writer's buffer is allocated once, not grown and copied as the page is written.
    /// (A page's bodies are bounded by ``Limits/maxPullPageBytes``.)
    var documentCapacity: Int {
        changes.reduce(1024) { total, change in
            switch change {
            case .upsert(let object):
                total + object.body.utf8.count + object.className.utf8.count + object.objectId.utf8.count + 256
            case .notice: total + 256
            }
        }
    }

    /// The page in the wire type, its objects decoded (what a client reads of it).
    /// - Throws: What decoding a stored body throws.
    func response() throws -> PullResponse {
        PullResponse(
            changes: try changes.map { change in
                switch change {
                case .upsert(let object): .upsert(try object.snapshot())
                case .notice(let notice): notice
                }
            },
            checkpoint: checkpoint, hasMore: hasMore, remaining: remaining, roles: roles)
    }
}

extension DocumentWriter {
    /// A page of the change feed in ``PullResponse``'s `Codable` form, each stored body spliced in
    /// as it is (``storedObject(_:)``).
    /// - Throws: What decoding a body that cannot be spliced throws.
    mutating func pullPage(_ page: PullPage) throws {
        pullPageStart(checkpoint: page.checkpoint, hasMore: page.hasMore, remaining: page.remaining, roles: page.roles)
        for (index, change) in page.changes.enumerated() {
            if index > 0 { raw(",") }
            switch change {
            case .upsert(let object):
                raw("{\"kind\":\"upsert\",\"object\":")
                try storedObject(object)
                raw("}")
            case .notice(let notice):
                try pullChange(notice)
            }
        }
        pullPageEnd()
    }

    /// An object as stored, in ``ObjectSnapshot``'s `Codable` form: its body spliced in as it is
    /// (``storedObject(className:objectId:datastore:createdAt:updatedAt:version:body:)``), or, for
    /// a body that is not a JSON object of fields, ACL and field versions (never written so),
    /// decoded and written anew, so that it fails here, not on the client.
    /// - Throws: What decoding such a body throws.
    mutating func storedObject(_ object: FeedObject) throws {
        let spliced = storedObject(
            className: object.className, objectId: object.objectId, datastore: object.datastoreId,
            createdAt: object.createdAt, updatedAt: object.updatedAt, version: object.version, body: object.body)
        if !spliced { try objectSnapshot(try object.snapshot()) }
    }
}
