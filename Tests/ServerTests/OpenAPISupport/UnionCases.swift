import RooftopShared

/// A value of every case of every wire union, as JSON, and each union's cases numbered by an
/// exhaustive switch: a case added to a union does not compile here until it is numbered, and the
/// union schema tests then want a sample of it.
enum UnionCases {
    static let values = [
        "null", "true", "42", #"{"$double": "1.5"}"#, #""text""#, #"{"$date": 1763779346123}"#,
        #"{"$bytes": "aGVsbG8=", "mimeType": "text/plain"}"#, #"{"$decimal": "1.50"}"#,
        #"{"$geoPoint": {"latitude": 40.4, "longitude": -3.7}}"#, #"{"$day": "2026-11-22"}"#,
        #"{"$json": {"a": [1, null]}}"#, #"[1, "a"]"#, #"{"$pointer": {"className": "Post", "objectId": "abc"}}"#,
        #"{"$relation": {"className": "User", "objectIds": ["a", "b"]}}"#,
    ]

    static func index(_ value: Value) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int: 2
        case .double: 3
        case .string: 4
        case .date: 5
        case .bytes: 6
        case .decimal: 7
        case .geoPoint: 8
        case .day: 9
        case .json: 10
        case .list: 11
        case .pointer: 12
        case .relation: 13
        }
    }

    static let operations = [
        #"{"op": "set", "value": 3}"#, #"{"op": "unset"}"#, #"{"op": "increment", "amount": 1}"#,
        #"{"op": "listAppend", "values": [1]}"#, #"{"op": "listInsert", "index": 0, "value": 1}"#,
        #"{"op": "listRemove", "index": 0}"#, #"{"op": "listMove", "from": 0, "to": 1}"#,
        #"{"op": "listReplace", "index": 0, "value": 2}"#,
        #"{"op": "relationAdd", "className": "User", "objectIds": ["a"]}"#,
        #"{"op": "relationRemove", "className": "User", "objectIds": ["a"]}"#,
    ]

    static func index(_ operation: FieldOperation) -> Int {
        switch operation {
        case .set: 0
        case .unset: 1
        case .increment: 2
        case .listAppend: 3
        case .listInsert: 4
        case .listRemove: 5
        case .listMove: 6
        case .listReplace: 7
        case .relationAdd: 8
        case .relationRemove: 9
        }
    }

    static let changes = [#"{"fields": {"a": 1}, "update": [{"field": "b", "do": {"op": "unset"}}]}"#, #"{"delete": true}"#]

    static func index(_ change: ObjectChange) -> Int {
        switch change {
        case .update: 0
        case .delete: 1
        }
    }

    static let requests = [
        #"{"query": {"className": "GameScore"}}"#, #"{"className": "GameScore", "text": "where a = ?", "parameters": [1]}"#,
    ]

    static func index(_ request: QueryRequest) -> Int {
        switch request {
        case .query: 0
        case .text: 1
        }
    }

    /// Every predicate kind, and a comparison by every operator.
    static let predicates =
        [
            #"{"and": [{"field": "a", "op": "exists"}, {"field": "b", "op": "exists"}]}"#,
            #"{"or": [{"field": "a", "op": "exists"}, {"field": "b", "op": "exists"}]}"#,
            #"{"not": {"field": "a", "op": "exists"}}"#, #"{"field": "a", "op": "in", "values": [1]}"#,
            #"{"field": "a", "op": "notIn", "values": [1]}"#, #"{"field": "a", "op": "exists"}"#,
            #"{"field": "a", "op": "notExists"}"#, #"{"field": "a", "op": "startsWith", "prefix": "x"}"#,
            #"{"field": "a", "op": "contains", "value": 1}"#, #"{"field": "a", "op": "containsAll", "values": [1]}"#,
            #"{"field": "a", "op": "near", "point": {"latitude": 1, "longitude": 2}, "maxDistanceMeters": 10}"#,
            #"{"field": "a", "op": "withinBox", "southwest": {"latitude": 1, "longitude": 2}, "northeast": {"latitude": 3, "longitude": 4}}"#,
            #"{"thisIn": ["abc"]}"#,
        ] + QueryPredicate.ComparisonOperator.allCases.map { #"{"field": "a", "op": "\#($0.rawValue)", "value": 1}"# }

    static func index(_ predicate: QueryPredicate) -> Int {
        switch predicate {
        case .and: 0
        case .or: 1
        case .not: 2
        case .in: 3
        case .notIn: 4
        case .exists: 5
        case .notExists: 6
        case .startsWith: 7
        case .listContains: 8
        case .containsAll: 9
        case .near: 10
        case .withinBox: 11
        case .thisIn: 12
        case .comparison(_, let op, _): 13 + (QueryPredicate.ComparisonOperator.allCases.firstIndex(of: op) ?? 0)
        }
    }

    static let results = [
        #"{"mutationId": "m1", "status": "applied", "version": 2}"#,
        #"{"mutationId": "m2", "status": "rejected", "error": {"code": "forbidden", "message": "no"}}"#,
    ]

    static func index(_ result: MutationResult) -> Int {
        switch result {
        case .applied: 0
        case .rejected: 1
        }
    }

    static let pullChanges = [
        #"{"kind": "upsert", "object": {"className": "A", "objectId": "b", "datastore": ":app", "fields": {}, "version": 1}}"#,
        #"{"kind": "tombstone", "className": "A", "objectId": "b", "version": 2}"#,
        #"{"kind": "removal", "className": "A", "objectId": "b"}"#,
    ]

    static func index(_ change: PullChange) -> Int {
        switch change {
        case .upsert: 0
        case .tombstone: 1
        case .removal: 2
        }
    }

    static let clientMessages = [
        #"{"type": "subscribe", "datastores": [":app"], "sessionToken": "r:1"}"#,
        #"{"type": "unsubscribe", "datastores": [":app"]}"#,
    ]

    static func index(_ message: LiveClientMessage) -> Int {
        switch message {
        case .subscribe: 0
        case .unsubscribe: 1
        }
    }

    static let serverMessages = [
        #"{"type": "subscribed", "datastores": [":app"]}"#, #"{"type": "changed", "datastore": ":app", "sequence": 3}"#,
        #"{"type": "error", "error": {"code": "forbidden", "message": "no"}, "datastore": ":app"}"#,
    ]

    static func index(_ message: LiveServerMessage) -> Int {
        switch message {
        case .subscribed: 0
        case .changed: 1
        case .error: 2
        }
    }
}
