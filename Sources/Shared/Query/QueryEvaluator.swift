/// Runs queries over objects in memory: the reference implementation of ``QueryPredicate``'s
/// semantics, used by the client over its local datastore and by tests that check the server's
/// SQL against it. Pure: no I/O, no state, no clock.
///
/// ```swift
/// let result = QueryEvaluator.run(query, over: objects, lookup: { objectsByPointer[$0] }, canRead: { _ in true })
/// let isMatch = QueryEvaluator.matches(object, Field("score") > 100)
/// ```
public enum QueryEvaluator {
    /// Whether an object meets a predicate, as documented on ``QueryPredicate``.
    ///
    /// The predicate need not have been validated: every predicate has an answer (an empty `and`
    /// holds, an empty `or` does not).
    /// - Parameters:
    ///   - object: The object; its class is not checked (``run(_:over:lookup:canRead:)`` does).
    ///   - predicate: The condition.
    public static func matches(_ object: ObjectSnapshot, _ predicate: QueryPredicate) -> Bool {
        switch predicate {
        case .and(let operands):
            return operands.allSatisfy { matches(object, $0) }
        case .or(let operands):
            return operands.contains { matches(object, $0) }
        case .not(let operand):
            return !matches(object, operand)
        case .comparison(let field, let op, let value):
            // Only '!=' matches a missing field: it is the complement of '='.
            guard let present = object[field] else { return op == .notEqual }
            return op.accepts(comparison: Value.compare(present, value))
        case .in(let field, let values):
            guard let present = object[field] else { return false }
            return values.contains { present.isEquivalent(to: $0) }
        case .notIn(let field, let values):
            return !matches(object, .in(field: field, values: values))
        case .exists(let field):
            return object[field] != nil
        case .notExists(let field):
            return object[field] == nil
        case .startsWith(let field, let prefix):
            guard case .string(let text)? = object[field] else { return false }
            return text.utf8.starts(with: prefix.utf8)
        case .listContains(let field, let value):
            guard let present = object[field] else { return false }
            return collection(present, contains: value)
        case .containsAll(let field, let values):
            guard let present = object[field], present.kind == .list || present.kind == .relation else {
                return false
            }
            return values.allSatisfy { collection(present, contains: $0) }
        case .near(let field, let point, let maximum):
            guard case .geoPoint(let location)? = object[field] else { return false }
            guard let maximum else { return true }
            return location.distanceMeters(to: point) <= maximum
        case .withinBox(let field, let southwest, let northeast):
            guard case .geoPoint(let location)? = object[field] else { return false }
            return isInside(location, southwest: southwest, northeast: northeast)
        case .thisIn(let references):
            return references.contains { $0.refers(toClass: object.className, objectId: object.objectId) }
        }
    }

    /// Whether a list holds an element equivalent to `value`, or a relation holds the pointer
    /// `value` (same class and object ID, compared bytewise).
    static func collection(_ collection: Value, contains value: Value) -> Bool {
        switch collection {
        case .list(let elements):
            return elements.contains { $0.isEquivalent(to: value) }
        case .relation(let relation):
            guard case .pointer(let pointer) = value,
                pointer.className.utf8.elementsEqual(relation.className.utf8)
            else { return false }
            return relation.objectIds.contains { $0.utf8.elementsEqual(pointer.objectId.utf8) }
        default:
            return false
        }
    }

    /// The box test of ``QueryPredicate/withinBox(field:southwest:northeast:)``, crossing the
    /// antimeridian when the southwest longitude is east of the northeast one.
    static func isInside(_ point: GeoPoint, southwest: GeoPoint, northeast: GeoPoint) -> Bool {
        guard southwest.latitude <= point.latitude, point.latitude <= northeast.latitude else { return false }
        if southwest.longitude <= northeast.longitude {
            return southwest.longitude <= point.longitude && point.longitude <= northeast.longitude
        }
        return point.longitude >= southwest.longitude || point.longitude <= northeast.longitude
    }

    /// The `near` condition that orders results by distance when a query has no explicit order:
    /// the first one reached from the top through `and` operands only, depth first. The server
    /// orders its SQL by the same anchor.
    public static func distanceAnchor(_ predicate: QueryPredicate?) -> (field: String, point: GeoPoint)? {
        distanceAnchorCondition(predicate).map { ($0.field, $0.point) }
    }

    /// ``distanceAnchor(_:)`` with the anchor's maximum distance in meters (`nil`: none).
    ///
    /// ```swift
    /// let anchor = QueryEvaluator.distanceAnchorCondition(query.predicate)  // (field, point, maximum)?
    /// ```
    public static func distanceAnchorCondition(
        _ predicate: QueryPredicate?
    ) -> (field: String, point: GeoPoint, maximum: Double?)? {
        switch predicate {
        case .near(let field, let point, let maximum)?:
            return (field, point, maximum)
        case .and(let operands)?:
            for operand in operands {
                if let anchor = distanceAnchorCondition(operand) { return anchor }
            }
            return nil
        default:
            return nil
        }
    }
}
