/// A class's settings: permissions (with the default ACL for new objects) and merge rules, as
/// `GET /v1/classes/{className}` answers them.
///
/// Wire form: `{"className": "GameScore", "permissions": {<ClassPermissions>}, "mergeRules": {"score": "sum"}}`.
public struct ClassSettings: Sendable, Hashable, Codable {
    /// The class.
    public var className: String
    /// Who may do what.
    public var permissions: ClassPermissions
    /// How concurrent changes to each field are merged.
    public var mergeRules: [String: MergeRule]

    /// Creates settings.
    public init(className: String, permissions: ClassPermissions = .default, mergeRules: [String: MergeRule] = [:]) {
        self.className = className
        self.permissions = permissions
        self.mergeRules = mergeRules
    }
}
