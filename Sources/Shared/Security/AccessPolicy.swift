/// The one access decision for an operation on an object: datastore role, then class-level
/// permission, then object ACL. All three must allow it; an admin passes everything.
///
/// | layer | allows |
/// |---|---|
/// | datastore role (``SharingRole``) | viewer: get, find, count; editor, owner: all |
/// | class permission (``ClassPermissions``) | the operation's ``PermissionRule`` |
/// | object ACL (``ACL``, `nil` = unrestricted) | read for get/find/count, write for update/delete; not consulted for create |
///
/// A refusal is ``RooftopError/Code/disallowed`` and its message names the layer that refused
/// (the datastore role, the class permission or the object's ACL) and the operation, but never
/// the object's fields or its ACL entries.
///
/// ```swift
/// try AccessPolicy.check(
///     .update, className: "GameScore", context: caller,
///     classPermissions: permissions, datastoreRole: sharing.effectiveRole(for: caller),
///     acl: stored.acl)
/// let visible = results.filter {
///     AccessPolicy.canRead($0, context: caller, classPermissions: permissions, datastoreRole: role)
/// }
/// ```
public enum AccessPolicy {
    /// Checks that the caller may perform an operation.
    /// - Parameters:
    ///   - operation: What the caller wants to do.
    ///   - className: The class concerned, for the message.
    ///   - context: Who asks.
    ///   - classPermissions: The class's permissions.
    ///   - datastoreRole: The caller's effective role in the object's datastore
    ///     (``DatastoreSharing/effectiveRole(for:)``).
    ///   - acl: The existing object's ACL (`nil`: no object-level restriction). Ignored for
    ///     `create`, which has no existing object. For a query-level check of `find` or `count`,
    ///     before any object is known, pass `nil` and filter each result with
    ///     ``canRead(_:context:classPermissions:datastoreRole:)``.
    /// - Throws: ``RooftopError/Code/disallowed`` naming the first layer that refuses.
    public static func check(
        _ operation: AccessOperation,
        className: String,
        context: AccessContext,
        classPermissions: ClassPermissions,
        datastoreRole: SharingRole,
        acl: ACL?
    ) throws(RooftopError) {
        if let refusal = refusal(
            operation, className: className, context: context, classPermissions: classPermissions,
            datastoreRole: datastoreRole, acl: acl)
        {
            throw refusal
        }
    }

    /// Whether the caller may see an object in query results, pulls and live notifications: the
    /// datastore role allows reading, the class's `find` permission lets the caller through and
    /// the object's ACL allows read.
    /// - Parameters:
    ///   - object: The object.
    ///   - context: Who asks.
    ///   - classPermissions: The permissions of the object's class.
    ///   - datastoreRole: The caller's effective role in the object's datastore.
    public static func canRead(
        _ object: ObjectSnapshot,
        context: AccessContext,
        classPermissions: ClassPermissions,
        datastoreRole: SharingRole
    ) -> Bool {
        refusal(
            .find, className: object.className, context: context, classPermissions: classPermissions,
            datastoreRole: datastoreRole, acl: object.acl) == nil
    }

    /// Whether the caller may perform an operation (``check(_:className:context:classPermissions:datastoreRole:acl:)``
    /// without the error).
    public static func allows(
        _ operation: AccessOperation,
        className: String,
        context: AccessContext,
        classPermissions: ClassPermissions,
        datastoreRole: SharingRole,
        acl: ACL?
    ) -> Bool {
        refusal(
            operation, className: className, context: context, classPermissions: classPermissions,
            datastoreRole: datastoreRole, acl: acl) == nil
    }

    /// The error for the first layer that refuses, or `nil` when all allow.
    private static func refusal(
        _ operation: AccessOperation,
        className: String,
        context: AccessContext,
        classPermissions: ClassPermissions,
        datastoreRole: SharingRole,
        acl: ACL?
    ) -> RooftopError? {
        if context.isAdmin { return nil }
        guard datastoreRole.allows(operation) else {
            return RooftopError(
                .disallowed,
                datastoreRole == .none
                    ? "datastore role: the caller has no access to this datastore"
                    : "datastore role: a \(datastoreRole) may not \(operation) objects")
        }
        guard classPermissions.allows(operation, for: context) else {
            return RooftopError(
                .disallowed, "class permission: \(operation) on class \(className) is not allowed for this caller")
        }
        let aclAllows: Bool
        switch operation {
        case .create: aclAllows = true
        case .get, .find, .count: aclAllows = ACL.allowsRead(acl, for: context)
        case .update, .delete: aclAllows = ACL.allowsWrite(acl, for: context)
        }
        guard aclAllows else {
            let access = operation.isRead ? "read" : "write"
            return RooftopError(
                .disallowed, "object ACL: the caller may not \(access) this \(className) object")
        }
        return nil
    }
}
