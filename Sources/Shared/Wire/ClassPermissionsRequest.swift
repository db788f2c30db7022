/// A request to replace a class's permissions and default ACL policy (admin only on the
/// reference server), and the answer when reading them.
///
/// Wire form: `{"className": "GameScore", "permissions": {<ClassPermissions>}}`.
public struct ClassPermissionsRequest: Hashable, Sendable, Codable {
    /// The class.
    public var className: String
    /// Its new permissions.
    public var permissions: ClassPermissions

    /// Creates a request.
    public init(className: String, permissions: ClassPermissions) {
        self.className = className
        self.permissions = permissions
    }
}
