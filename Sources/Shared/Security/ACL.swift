/// An object's access control list: which principals may read it and which may write it
/// (as in Parse).
///
/// The wire form is Parse's: `{"*": {"read": true}, "u1": {"read": true, "write": true},
/// "role:Admins": {"write": true}}`. A principal absent from the list has no access.
///
/// ```swift
/// var acl = ACL()
/// acl.setReadAccess(true, for: .everyone)
/// acl.setWriteAccess(true, for: .user(me.objectId))
/// ```
public struct ACL: Hashable, Sendable {
    /// What one principal may do.
    public struct Access: Hashable, Sendable, Codable {
        /// May read (get, find, pull).
        public var read: Bool
        /// May write (update, delete).
        public var write: Bool

        /// Creates an entry.
        public init(read: Bool = false, write: Bool = false) {
            self.read = read
            self.write = write
        }

        /// May read and write.
        public static let readWrite = Access(read: true, write: true)
        /// May read only.
        public static let readOnly = Access(read: true)

        /// Decodes `{"read": true, "write": false}`; missing keys mean `false`.
        public init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "ACL entry")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.read = try container.decodeIfPresent(Bool.self, forKey: .read) ?? false
            self.write = try container.decodeIfPresent(Bool.self, forKey: .write) ?? false
        }

        private enum CodingKeys: String, CodingKey, CaseIterable { case read, write }
    }

    /// The entries. Principals with neither read nor write are dropped.
    public private(set) var entries: [Principal: Access]

    /// An ACL from entries.
    public init(_ entries: [Principal: Access] = [:]) {
        self.entries = entries.filter { $0.value.read || $0.value.write }
    }

    /// An ACL that lets one user read and write and nobody else: the default for new objects.
    public static func only(_ userId: String) -> ACL {
        ACL([.user(userId): Access(read: true, write: true)])
    }

    /// An ACL that lets everyone read and write.
    public static let publicReadWrite = ACL([.everyone: Access(read: true, write: true)])

    /// Gives or takes away read access for a principal.
    public mutating func setReadAccess(_ allowed: Bool, for principal: Principal) {
        update(principal) { $0.read = allowed }
    }

    /// Gives or takes away write access for a principal.
    public mutating func setWriteAccess(_ allowed: Bool, for principal: Principal) {
        update(principal) { $0.write = allowed }
    }

    /// Whether the principal itself has read access (not considering other principals).
    public func readAccess(for principal: Principal) -> Bool { entries[principal]?.read ?? false }

    /// Whether the principal itself has write access (not considering other principals).
    public func writeAccess(for principal: Principal) -> Bool { entries[principal]?.write ?? false }

    private mutating func update(_ principal: Principal, _ change: (inout Access) -> Void) {
        var access = entries[principal] ?? Access()
        change(&access)
        entries[principal] = access.read || access.write ? access : nil
    }
}

extension ACL: Codable {
    /// Decodes Parse's form, validating every principal.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var entries: [Principal: Access] = [:]
        for key in container.allKeys {
            entries[try Principal(key.stringValue)] = try container.decode(Access.self, forKey: key)
        }
        self.init(entries)
    }

    /// Encodes Parse's form; only `true` flags are written.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        for (principal, access) in entries {
            var nested = container.nestedContainer(keyedBy: AccessKey.self, forKey: AnyCodingKey(principal.description))
            if access.read { try nested.encode(true, forKey: .read) }
            if access.write { try nested.encode(true, forKey: .write) }
        }
    }

    private enum AccessKey: String, CodingKey { case read, write }
}
