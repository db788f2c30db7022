import Foundation

/// The data model read directly: values in their portable form, fields, field versions, ACLs and
/// whole objects (``ObjectSnapshot``).
extension DocumentReader {
    /// A value in the portable form (see `Value`'s `Codable` conformance), for the kinds this
    /// reader handles.
    package mutating func readValue() throws -> Value {
        switch try peek() {
        case UInt8(ascii: "n"):
            try consumeLiteral("null")
            return .null
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return .bool(try readBool())
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "["):
            var values: [Value] = []
            try readArray { reader in
                // Room for a short list at once: grown from empty, three elements took three
                // allocations.
                if values.isEmpty { values.reserveCapacity(4) }
                values.append(try reader.readValue())
            }
            return .list(values)
        case UInt8(ascii: "{"):
            return try readTaggedValue()
        default:
            return .int(try readInt64())
        }
    }

    /// The tags of the values read here (``Value``'s `Codable` form), and a point's members.
    private enum TagKey: String, CaseIterable, Sendable {
        case double = "$double", date = "$date", geoPoint = "$geoPoint"
        static let keys = DocumentKeys(allCases)
    }

    private enum PointKey: String, CaseIterable, Sendable {
        case latitude, longitude
        static let keys = DocumentKeys(allCases)
    }

    private mutating func readTaggedValue() throws -> Value {
        var value: Value?
        try readObject(TagKey.keys) { reader, key in
            guard value == nil else { throw Unhandled() }
            switch key {
            case .double:
                guard let double = Value.parseDouble(try reader.readString()) else { throw Unhandled() }
                value = .double(double)
            case .date:
                value = .date(Timestamp(millisecondsSinceEpoch: try reader.readInt64()))
            case .geoPoint:
                var latitude: Double?
                var longitude: Double?
                try reader.readObject(PointKey.keys) { reader, key in
                    switch key {
                    case .latitude: latitude = try reader.readDouble()
                    case .longitude: longitude = try reader.readDouble()
                    }
                }
                guard let latitude, let longitude,
                    let point = try? GeoPoint(latitude: latitude, longitude: longitude)
                else { throw Unhandled() }
                value = .geoPoint(point)
            }
        }
        guard let value else { throw Unhandled() }
        return value
    }

    /// The fields a dictionary of an object's fields (or their versions) is made with room for.
    static let typicalFieldCount = 8

    /// Field values by name.
    package mutating func readFields() throws -> [String: Value] {
        // Room for a typical object's fields: growing from empty rehashed them three times.
        var fields = [String: Value](minimumCapacity: Self.typicalFieldCount)
        try readNamedMembers { reader, name in
            guard fields.updateValue(try reader.readValue(), forKey: name) == nil else { throw Unhandled() }
        }
        return fields
    }

    /// Field versions by name.
    package mutating func readFieldVersions() throws -> [String: Int64] {
        var versions = [String: Int64](minimumCapacity: Self.typicalFieldCount)
        try readNamedMembers { reader, name in
            guard versions.updateValue(try reader.readInt64(), forKey: name) == nil else { throw Unhandled() }
        }
        return versions
    }

    /// Reads an object whose keys are names the caller keeps in a dictionary, which refuses a
    /// repeated one itself (``readObject(_:)-(_)`` would compare each key with those before).
    private mutating func readNamedMembers(_ member: (inout DocumentReader, String) throws -> Void) throws {
        try readContainer(UInt8(ascii: "{"), UInt8(ascii: "}")) { reader in
            let name = try reader.readString()
            try reader.consume(UInt8(ascii: ":"))
            try member(&reader, name)
        }
    }

    /// An ACL in Parse's form, each principal validated.
    ///
    /// An ACL whose text is byte for byte the last one's is not read again (``reusing(_:_:)``:
    /// a page of 500 objects sharing one ACL reads it once; reading it was a third of reading
    /// such an object).
    package mutating func readACL() throws -> ACL {
        try reusing(\.lastACL) { try $0.readNewACL() }
    }

    private mutating func readNewACL() throws -> ACL {
        var entries = [Principal: ACL.Access](minimumCapacity: 3)
        try readObject { reader, key in
            guard let principal = try? Principal(key) else { throw Unhandled() }
            var access = ACL.Access(read: false, write: false)
            try reader.readObject { reader, flag in
                switch flag {
                case "read": access.read = try reader.readBool()
                case "write": access.write = try reader.readBool()
                default: throw Unhandled()
                }
            }
            entries[principal] = access
        }
        return ACL(entries)
    }

    /// A class name, the last one's when its text is the same (``reusing(_:_:)``).
    mutating func readClassName() throws -> String {
        try reusing(\.lastClassName) { try $0.readString() }
    }

    /// A datastore ID, validated, the last one's when its text is the same (``reusing(_:_:)``).
    mutating func readDatastoreID() throws -> DatastoreID {
        try reusing(\.lastDatastore) { reader in
            guard let id = try? DatastoreID(try reader.readString()) else { throw Unhandled() }
            return id
        }
    }

    /// The members of an object's form (``ObjectSnapshot``'s `Codable` keys).
    private enum SnapshotKey: String, CaseIterable, Sendable {
        case className, objectId, datastore, fields, acl, createdAt, updatedAt, version, fieldVersions
        static let keys = DocumentKeys(allCases)
    }

    /// A stored or sent object (``ObjectSnapshot``'s `Codable` form).
    package mutating func readObjectSnapshot() throws -> ObjectSnapshot {
        var className: String?
        var objectId: String?
        var datastore: DatastoreID?
        var fields: [String: Value]?
        var acl: ACL?
        var createdAt: Timestamp?
        var updatedAt: Timestamp?
        var version: Int64?
        var fieldVersions: [String: Int64]?
        try readObject(SnapshotKey.keys) { reader, key in
            switch key {
            case .className: className = try reader.readClassName()
            case .objectId: objectId = try reader.readString()
            case .datastore: datastore = try reader.readDatastoreID()
            case .fields: fields = try reader.readFields()
            case .acl: acl = try reader.readNull() ? nil : try reader.readACL()
            case .createdAt:
                createdAt = try reader.readNull() ? nil : Timestamp(millisecondsSinceEpoch: try reader.readInt64())
            case .updatedAt:
                updatedAt = try reader.readNull() ? nil : Timestamp(millisecondsSinceEpoch: try reader.readInt64())
            case .version: version = try reader.readInt64()
            case .fieldVersions: fieldVersions = try reader.readNull() ? nil : try reader.readFieldVersions()
            }
        }
        guard let className, let objectId, let datastore, let fields, let version else { throw Unhandled() }
        return ObjectSnapshot(
            className: className, objectId: objectId, datastore: datastore, fields: fields, acl: acl,
            createdAt: createdAt, updatedAt: updatedAt, version: version, fieldVersions: fieldVersions)
    }
}
