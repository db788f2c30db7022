import RooftopShared

/// Identifies an object: its datastore, class and ID.
public struct ObjectKey: Hashable, Sendable, CustomStringConvertible {
    /// The datastore that holds the object.
    public var datastore: DatastoreID
    /// The object's class.
    public var className: String
    /// The object's ID.
    public var objectId: String

    /// A key.
    public init(datastore: DatastoreID, className: String, objectId: String) {
        self.datastore = datastore
        self.className = className
        self.objectId = objectId
    }

    /// The key of a snapshot.
    public init(_ snapshot: ObjectSnapshot) {
        self.init(datastore: snapshot.datastore, className: snapshot.className, objectId: snapshot.objectId)
    }

    /// `datastore/ClassName/objectId`.
    public var description: String { "\(datastore)/\(className)/\(objectId)" }
}
