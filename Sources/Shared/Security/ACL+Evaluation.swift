extension ACL {
    /// Whether the caller may read an object with this ACL: the caller is an admin, or one of
    /// the caller's ``AccessContext/principals`` (`*`, the user, one of the user's roles) has
    /// read access.
    ///
    /// ```swift
    /// let acl = ACL([.role("Staff"): .init(read: true)])
    /// acl.allowsRead(for: AccessContext(userId: "u1", roles: ["Staff"]))   // true
    /// acl.allowsRead(for: .anonymous)                                      // false
    /// ```
    public func allowsRead(for context: AccessContext) -> Bool {
        context.isAdmin || entries.contains { context.holds($0.key) && $0.value.read }
    }

    /// Whether the caller may write (update, delete) an object with this ACL: the caller is an
    /// admin, or one of the caller's principals has write access.
    public func allowsWrite(for context: AccessContext) -> Bool {
        context.isAdmin || entries.contains { context.holds($0.key) && $0.value.write }
    }

    /// Whether an optional ACL allows the caller to read: `nil` means no object-level
    /// restriction, so it allows everyone.
    public static func allowsRead(_ acl: ACL?, for context: AccessContext) -> Bool {
        acl?.allowsRead(for: context) ?? true
    }

    /// Whether an optional ACL allows the caller to write: `nil` allows everyone.
    public static func allowsWrite(_ acl: ACL?, for context: AccessContext) -> Bool {
        acl?.allowsWrite(for: context) ?? true
    }
}
