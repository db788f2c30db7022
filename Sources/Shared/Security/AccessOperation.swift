/// What a request does to a class's objects: the operations class-level permissions and
/// datastore roles are about.
public enum AccessOperation: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Read one object by ID.
    case get
    /// Query objects (also: pull them, receive live notifications about them).
    case find
    /// Count objects matching a query.
    case count
    /// Create a new object.
    case create
    /// Change an existing object.
    case update
    /// Delete an existing object.
    case delete

    /// Whether the operation only reads (get, find, count).
    public var isRead: Bool {
        switch self {
        case .get, .find, .count: true
        case .create, .update, .delete: false
        }
    }

    /// The wire name, e.g. `find`.
    public var description: String { rawValue }
}
