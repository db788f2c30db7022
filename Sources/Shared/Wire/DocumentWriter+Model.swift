import Foundation

/// The data model written directly: values in their portable form, fields, ACLs, objects and
/// the answers built of them.
extension DocumentWriter {
    /// A value in the portable form.
    /// - Throws: What `JSONEncoder` throws for the kinds left to it.
    package mutating func value(_ value: Value) throws {
        switch value {
        case .null: raw("null")
        case .bool(let flag): bool(flag)
        case .int(let number): int(number)
        case .string(let text): string(text)
        case .list(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .double(let number):
            raw("{\"$double\":")
            string(Value.formatDouble(number))
            bytes.append(UInt8(ascii: "}"))
        case .date(let timestamp):
            raw("{\"$date\":")
            int(timestamp.millisecondsSinceEpoch)
            bytes.append(UInt8(ascii: "}"))
        case .geoPoint(let point):
            raw("{\"$geoPoint\":{\"latitude\":")
            number(point.latitude)
            raw(",\"longitude\":")
            number(point.longitude)
            raw("}}")
        case .bytes, .decimal, .day, .json, .pointer, .relation:
            try encoded(value)
        }
    }

    /// Field values by name.
    package mutating func fields(_ fields: [String: Value]) throws {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (name, value) in fields {
            key(name, first: first)
            first = false
            try self.value(value)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Field versions by name.
    package mutating func fieldVersions(_ versions: [String: Int64]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (name, version) in versions {
            key(name, first: first)
            first = false
            int(version)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// An ACL in Parse's form (only `true` flags written).
    package mutating func acl(_ acl: ACL) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (principal, access) in acl.entries {
            key(principal.description, first: first)
            first = false
            switch (access.read, access.write) {
            case (true, true): raw("{\"read\":true,\"write\":true}")
            case (true, false): raw("{\"read\":true}")
            case (false, true): raw("{\"write\":true}")
            case (false, false): raw("{}")
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// An object in ``ObjectSnapshot``'s `Codable` form (absent optionals left out).
    package mutating func objectSnapshot(_ object: ObjectSnapshot) throws {
        raw("{\"className\":")
        string(object.className)
        raw(",\"objectId\":")
        string(object.objectId)
        raw(",\"datastore\":")
        string(object.datastore.rawValue)
        raw(",\"fields\":")
        try fields(object.fields)
        if let acl = object.acl {
            raw(",\"acl\":")
            self.acl(acl)
        }
        if let createdAt = object.createdAt {
            raw(",\"createdAt\":")
            int(createdAt.millisecondsSinceEpoch)
        }
        if let updatedAt = object.updatedAt {
            raw(",\"updatedAt\":")
            int(updatedAt.millisecondsSinceEpoch)
        }
        raw(",\"version\":")
        int(object.version)
        if let versions = object.fieldVersions {
            raw(",\"fieldVersions\":")
            fieldVersions(versions)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Objects as a JSON array.
    package mutating func objectSnapshots(_ objects: [ObjectSnapshot]) throws {
        bytes.append(UInt8(ascii: "["))
        for (index, object) in objects.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try objectSnapshot(object)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A query's answer in ``QueryResult``'s `Codable` form.
    package mutating func queryResult(_ result: QueryResult) throws {
        raw("{\"objects\":")
        try objectSnapshots(result.objects)
        raw(",\"totalCount\":")
        int(Int64(result.totalCount))
        raw(",\"included\":")
        try objectSnapshots(result.included)
        bytes.append(UInt8(ascii: "}"))
    }

    /// One object with what it includes, in ``ObjectWithIncludes``'s `Codable` form.
    package mutating func objectWithIncludes(_ found: ObjectWithIncludes) throws {
        raw("{\"object\":")
        try objectSnapshot(found.object)
        raw(",\"included\":")
        try objectSnapshots(found.included)
        bytes.append(UInt8(ascii: "}"))
    }

    /// A REST write's answer in ``WriteResponse``'s `Codable` form.
    package mutating func writeResponse(_ response: WriteResponse) throws {
        raw("{\"objectId\":")
        string(response.objectId)
        raw(",\"version\":")
        int(response.version)
        if let object = response.object {
            raw(",\"object\":")
            try objectSnapshot(object)
        }
        raw(",\"merges\":")
        try encoded(response.merges)
        bytes.append(UInt8(ascii: "}"))
    }

    /// A push's answer in ``PushResponse``'s `Codable` form (merges and errors through
    /// `JSONEncoder`: they are few).
    /// - Throws: What `JSONEncoder` throws.
    package mutating func pushResponse(_ response: PushResponse) throws {
        raw("{\"results\":[")
        for (index, result) in response.results.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            raw("{\"mutationId\":")
            string(result.mutationId.rawValue)
            switch result {
            case .applied(_, let version, let object, let merges):
                raw(",\"status\":\"applied\",\"version\":")
                int(version)
                if let object {
                    raw(",\"object\":")
                    try objectSnapshot(object)
                }
                if !merges.isEmpty {
                    raw(",\"merges\":")
                    try encoded(merges)
                }
            case .rejected(_, let error):
                raw(",\"status\":\"rejected\",\"error\":")
                try encoded(error)
            }
            bytes.append(UInt8(ascii: "}"))
        }
        raw("]}")
    }

    /// A page of the change feed in ``PullResponse``'s `Codable` form.
    package mutating func pullResponse(_ page: PullResponse) throws {
        pullPageStart(checkpoint: page.checkpoint, hasMore: page.hasMore, remaining: page.remaining, roles: page.roles)
        for (index, change) in page.changes.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try pullChange(change)
        }
        pullPageEnd()
    }

    /// A pull page's members up to its changes, which follow (``pullChange(_:)``, comma-separated,
    /// then ``pullPageEnd()``).
    package mutating func pullPageStart(checkpoint: Checkpoint, hasMore: Bool, remaining: Int?, roles: [String]?) {
        // Where the pull goes on comes first: a client asks for the next page as soon as it has
        // read this far, while it reads the changes (``PullResponse/continuation(of:)``).
        raw("{\"checkpoint\":")
        string(checkpoint.rawValue)
        raw(",\"hasMore\":")
        bool(hasMore)
        if let remaining {
            raw(",\"remaining\":")
            int(Int64(remaining))
        }
        if let roles {
            raw(",\"roles\":")
            strings(roles)
        }
        raw(",\"changes\":[")
    }

    /// The end of a pull page (``pullPageStart(checkpoint:hasMore:remaining:roles:)``).
    package mutating func pullPageEnd() {
        raw("]}")
    }

    /// One change of a pull page in ``PullChange``'s `Codable` form.
    package mutating func pullChange(_ change: PullChange) throws {
        switch change {
        case .upsert(let object):
            raw("{\"kind\":\"upsert\",\"object\":")
            try objectSnapshot(object)
        case .tombstone(let className, let objectId, let version):
            raw("{\"kind\":\"tombstone\",\"className\":")
            string(className)
            raw(",\"objectId\":")
            string(objectId)
            raw(",\"version\":")
            int(version)
        case .removal(let className, let objectId):
            raw("{\"kind\":\"removal\",\"className\":")
            string(className)
            raw(",\"objectId\":")
            string(objectId)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// An object in ``ObjectSnapshot``'s `Codable` form whose fields, ACL and field versions are
    /// JSON text already: `body`, an object with the members `fields` and, when set, `acl` and
    /// `fieldVersions`, spliced in as it is, after the envelope written here. The body's
    /// structure is checked first (``StoredBodyScan``), so that text damaged or written by
    /// something else can never add members to the object, or objects to the answer.
    /// - Returns: `false`, with nothing written, when `body` is not such an object.
    package mutating func storedObject(
        className: String, objectId: String, datastore: String, createdAt: Int64?, updatedAt: Int64?, version: Int64,
        body: String
    ) -> Bool {
        var body = body
        return body.withUTF8 { text in
            guard let members = StoredBodyScan.members(of: text) else { return false }
            raw("{\"className\":")
            string(className)
            raw(",\"objectId\":")
            string(objectId)
            raw(",\"datastore\":")
            string(datastore)
            if let createdAt {
                raw(",\"createdAt\":")
                int(createdAt)
            }
            if let updatedAt {
                raw(",\"updatedAt\":")
                int(updatedAt)
            }
            raw(",\"version\":")
            int(version)
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[members]))
            bytes.append(UInt8(ascii: "}"))
            return true
        }
    }
}
