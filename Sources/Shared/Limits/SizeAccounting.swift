/// How Rooftop counts the size of values, records, datastores and pushes (the Dropbox Datastore API's rules), so
/// that client and server agree on when a limit (``Limits``) is reached.
///
/// These are accounting sizes, not storage or wire sizes: stable, cheap to compute, and the same
/// on every platform. All lengths are UTF-8 byte counts.
///
/// | what | size |
/// |---|---|
/// | record | 100 + Σ over fields (100 + value size) |
/// | string, bytes | byte length |
/// | list | Σ over items (20 + item size) |
/// | decimal | length of its text |
/// | json | length of its canonical text (``JSONValue/canonicalText``) |
/// | pointer | class name length + object ID length |
/// | relation | Σ over IDs (20 + ID length) + class name length |
/// | null, bool, int, double, date, day, geoPoint | 0 |
/// | datastore | 1000 + Σ records |
/// | push | 100 + Σ changes |
/// | change | 100 + size of the values it carries |
///
/// Field names, the object ID, the class name and the ACL of a record are not counted (the Dropbox Datastore API
/// counts values only); the request body limit bounds them. A change carries the value of a
/// `set`, the values of a `listAppend`, the value of a `listInsert` or `listReplace`, the amount
/// of an `increment` (a number: 0) and, for `relationAdd` / `relationRemove`, their IDs and
/// class as a relation value would count them; `unset`, `listRemove`, `listMove` and `delete`
/// carry nothing.
///
/// ```swift
/// SizeAccounting.size(of: "hello")                       // 5
/// SizeAccounting.recordSize(fields: ["name": "hello"])   // 100 + (100 + 5) = 205
/// ```
public enum SizeAccounting {
    /// The size of an empty record: 100.
    public static let recordBaseBytes = 100
    /// The size of a field before its value: 100.
    public static let fieldBaseBytes = 100
    /// The size of a list item before its value: 20.
    public static let listItemBaseBytes = 20
    /// The size of a relation member before its ID: 20.
    public static let relationItemBaseBytes = 20
    /// The size of an empty datastore: 1000.
    public static let datastoreBaseBytes = 1000
    /// The size of an empty push: 100.
    public static let pushBaseBytes = 100
    /// The size of a change before its values: 100.
    public static let changeBaseBytes = 100

    /// The size of a value (see the table above).
    public static func size(of value: Value) -> Int {
        switch value {
        case .null, .bool, .int, .double, .date, .day, .geoPoint:
            return 0
        case .string(let text):
            return text.utf8.count
        case .bytes(let binary):
            return binary.data.count
        case .decimal(let number):
            return number.text.utf8.count
        case .json(let json):
            return json.canonicalText.utf8.count
        case .list(let items):
            return items.reduce(0) { $0 + listItemBaseBytes + size(of: $1) }
        case .pointer(let pointer):
            return pointer.className.utf8.count + pointer.objectId.utf8.count
        case .relation(let relation):
            return relationSize(className: relation.className, objectIds: relation.objectIds)
        }
    }

    /// The size of one field holding a value: 100 + the value's size.
    public static func fieldSize(_ value: Value) -> Int {
        fieldBaseBytes + size(of: value)
    }

    /// The size of a record with these fields: 100 + Σ field sizes.
    public static func recordSize(fields: [String: Value]) -> Int {
        fields.values.reduce(recordBaseBytes) { $0 + fieldSize($1) }
    }

    /// The size of an object's record (its ``ObjectSnapshot/fields``).
    public static func recordSize(_ object: ObjectSnapshot) -> Int {
        recordSize(fields: object.fields)
    }

    /// The size of a datastore holding records of these sizes: 1000 + Σ record sizes.
    public static func datastoreSize<S: Sequence<Int>>(recordSizes: S) -> Int {
        recordSizes.reduce(datastoreBaseBytes, +)
    }

    /// The size of the values one field operation carries (see the type's documentation).
    public static func carriedSize(of operation: FieldOperation) -> Int {
        switch operation {
        case .relationAdd(let className, let objectIds), .relationRemove(let className, let objectIds):
            relationSize(className: className, objectIds: objectIds)
        default:
            operation.values.reduce(0) { $0 + size(of: $1) }
        }
    }

    /// The size of a change to one object: 100 + the sizes of the values it carries.
    public static func changeSize(_ change: ObjectChange) -> Int {
        change.updates.reduce(changeBaseBytes) { $0 + carriedSize(of: $1.operation) }
    }

    /// The size of a push: 100 + Σ change sizes of its mutations.
    public static func pushSize(_ mutations: [Mutation]) -> Int {
        mutations.reduce(pushBaseBytes) { $0 + changeSize($1.change) }
    }

    private static func relationSize(className: String, objectIds: [String]) -> Int {
        objectIds.reduce(className.utf8.count) { $0 + relationItemBaseBytes + $1.utf8.count }
    }
}
