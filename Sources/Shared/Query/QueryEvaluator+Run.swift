extension QueryEvaluator {
    /// Runs a whole query: filter, order, page and includes.
    ///
    /// 1. Candidates are the objects of the query's class (compared bytewise) that `canRead`
    ///    allows and that match the predicate. `totalCount` counts them.
    /// 2. They are ordered by the query's keys in turn, by ``Value/compare(_:_:)``; a missing
    ///    value sorts before every value ascending (after, descending). With no keys, a `near`
    ///    anchor (see ``QueryPredicate``) orders by distance, nearest first. The last tie-break is
    ///    always `objectId` ascending by UTF-8 bytes, so the order is total and deterministic.
    /// 3. `offset` results are skipped, then at most `limit` kept (negative values, which
    ///    ``Query/validate(maxDepth:)`` rejects, count as 0).
    /// 4. For each include path, pointer fields are followed from the page's objects (then from
    ///    the objects reached, for longer paths). Each target that `lookup` finds and `canRead`
    ///    allows is included, once, whether or not it is also a result; intermediate objects of a
    ///    path are included too. Unreadable or missing targets are left out silently and not
    ///    followed further; values other than pointers (lists, relations) are not followed.
    ///    `included` is sorted by class name, then object ID (bytewise).
    ///
    /// - Parameters:
    ///   - query: The query (validate it first when it comes from outside).
    ///   - objects: Every object the query may see; each object should appear once.
    ///   - lookup: Finds the object a pointer refers to, or `nil`.
    ///   - canRead: Whether the reader may see an object (its ACL, class permissions).
    /// - Returns: the page of results, the total count before paging, and the included objects.
    ///
    /// ```swift
    /// let page = QueryEvaluator.run(
    ///     Query("Post").where(Field("published") == true).order(by: "createdAt", descending: true).limit(20),
    ///     over: posts, lookup: { pointer in objectsByPointer[pointer] },
    ///     canRead: { $0.acl?.readAccess(for: .everyone) ?? true })
    /// ```
    public static func run(
        _ query: Query,
        over objects: some Sequence<ObjectSnapshot>,
        lookup: (Pointer) -> ObjectSnapshot?,
        canRead: (ObjectSnapshot) -> Bool
    ) -> QueryResult {
        let matched = objects.filter { object in
            object.className.utf8.elementsEqual(query.className.utf8) && canRead(object)
                && (query.predicate.map { matches(object, $0) } ?? true)
        }
        let ordered = sorted(matched, by: query)
        let start = min(max(query.offset, 0), ordered.count)
        // `start + limit` may not fit an Int for a huge limit: take at most what is left.
        let end = query.limit.map { start + min(max($0, 0), ordered.count - start) } ?? ordered.count
        let page = Array(ordered[start..<end])
        return QueryResult(
            objects: page,
            totalCount: matched.count,
            included: included(from: page, paths: query.includes, lookup: lookup, canRead: canRead))
    }

    /// Orders objects as ``run(_:over:lookup:canRead:)`` documents.
    static func sorted(_ objects: [ObjectSnapshot], by query: Query) -> [ObjectSnapshot] {
        if query.order.isEmpty, let anchor = distanceAnchor(query.predicate) {
            // A field that is not a point (impossible when the anchor's condition held) sorts last.
            let keyed = objects.map { object in
                (object, object[anchor.field]?.geoPointValue.map { $0.distanceMeters(to: anchor.point) } ?? .infinity)
            }
            return keyed.sorted { lhs, rhs in
                if lhs.1 != rhs.1 { return lhs.1 < rhs.1 }
                return compareBytes(lhs.0.objectId.utf8, rhs.0.objectId.utf8) < 0
            }.map(\.0)
        }
        // Read every key once rather than on each comparison.
        let keyed = objects.map { object in (object, query.order.map { object[$0.field] }) }
        return keyed.sorted { lhs, rhs in
            for (position, key) in query.order.enumerated() {
                let result: Int
                switch (lhs.1[position], rhs.1[position]) {
                case (nil, nil): result = 0
                case (nil, _): result = -1
                case (_, nil): result = 1
                case (let left?, let right?): result = Value.compare(left, right)
                }
                if result != 0 { return key.descending ? result > 0 : result < 0 }
            }
            return compareBytes(lhs.0.objectId.utf8, rhs.0.objectId.utf8) < 0
        }.map(\.0)
    }

    /// The objects reached through the include paths, deduplicated and sorted.
    static func included(
        from page: [ObjectSnapshot],
        paths: [[String]],
        lookup: (Pointer) -> ObjectSnapshot?,
        canRead: (ObjectSnapshot) -> Bool
    ) -> [ObjectSnapshot] {
        var found: [Pointer: ObjectSnapshot] = [:]
        for path in paths {
            var frontier = page
            for field in path {
                var next: [Pointer: ObjectSnapshot] = [:]
                for object in frontier {
                    guard case .pointer(let pointer)? = object[field],
                        let target = lookup(pointer), canRead(target)
                    else { continue }
                    next[target.pointer] = target
                    found[target.pointer] = target
                }
                frontier = Array(next.values)
            }
        }
        return found.values.sorted { lhs, rhs in
            let byClass = compareBytes(lhs.className.utf8, rhs.className.utf8)
            return byClass != 0 ? byClass < 0 : compareBytes(lhs.objectId.utf8, rhs.objectId.utf8) < 0
        }
    }
}
