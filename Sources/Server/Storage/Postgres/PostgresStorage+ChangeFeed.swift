import PostgresNIO
import RooftopShared

extension PostgresStorage {
    /// See ``Storage/changes(datastoreKey:after:limit:classes:)``.
    public func changes(datastoreKey: Int64, after sequence: Int64, limit: Int, classes: Set<String>?) async throws
        -> [FeedObject]
    {
        let limit = Int64(limit)
        return try await read { session in
            // Sequences commit in order within a datastore (its row lock), so reading after
            // `sequence` never skips a change that commits later.
            try Self.feedObjects(session.query(
                """
                \(unescaped: Self.feedObjectSelect)
                WHERE o.datastore_key = \(datastoreKey) AND o.sequence > \(sequence)
                AND (\(classes == nil) OR o.class_name = ANY(\(classes.map { $0.sorted() } ?? [])))
                ORDER BY o.sequence LIMIT \(limit)
                """
            ))
        }
    }

    /// See ``Storage/changeCount(datastoreKey:after:classes:readers:)``.
    public func changeCount(datastoreKey: Int64, after sequence: Int64, classes: Set<String>?, readers: Set<String>?)
        async throws -> Int
    {
        try await read { session in
            let count = try session.query(
                """
                SELECT count(*) FROM objects o WHERE o.datastore_key = \(datastoreKey) AND o.sequence > \(sequence)
                AND (\(classes == nil) OR o.class_name = ANY(\(classes.map { $0.sorted() } ?? [])))
                AND (\(readers == nil) OR EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                    AND r.principal = ANY(\(readers.map { $0.sorted() } ?? []))))
                """
            ).first?.decode(Int64.self) ?? 0
            return Int(count)
        }
    }

    /// See ``Storage/lostAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:)``.
    public func lostAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>
    ) async throws -> [Pointer] {
        guard !formerPrincipals.isEmpty else { return [] }
        let (former, current) = (formerPrincipals.sorted(), currentPrincipals.sorted())
        return try await read { session in
            try session.query(
                """
                SELECT o.class_name, o.object_id FROM objects o
                WHERE o.datastore_key = \(datastoreKey) AND NOT o.deleted AND o.sequence <= \(sequence)
                AND EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                    AND r.principal = ANY(\(former)) AND r.from_sequence <= \(sequence)
                    AND (r.to_sequence IS NULL OR r.to_sequence > \(sequence)))
                AND NOT EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                    AND r.to_sequence IS NULL AND r.principal = ANY(\(current)))
                ORDER BY o.sequence
                """
            ).map { row in
                let (className, objectId) = try row.decode((String, String).self)
                return Pointer(className: className, objectId: objectId)
            }
        }
    }

    /// See ``Storage/gainedAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:limit:)``.
    public func gainedAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>, limit: Int
    ) async throws -> [FeedObject] {
        guard !currentPrincipals.isEmpty else { return [] }
        let (former, current, limit) = (formerPrincipals.sorted(), currentPrincipals.sorted(), Int64(limit))
        return try await read { session in
            try Self.feedObjects(session.query(
                """
                \(unescaped: Self.feedObjectSelect)
                WHERE o.datastore_key = \(datastoreKey) AND NOT o.deleted AND o.sequence <= \(sequence)
                AND EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                    AND r.to_sequence IS NULL AND r.principal = ANY(\(current)))
                AND NOT EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                    AND r.principal = ANY(\(former)) AND r.from_sequence <= \(sequence)
                    AND (r.to_sequence IS NULL OR r.to_sequence > \(sequence)))
                ORDER BY o.sequence LIMIT \(limit)
                """
            ))
        }
    }
}
