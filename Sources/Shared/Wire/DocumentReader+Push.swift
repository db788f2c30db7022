import Foundation

extension DocumentReader {
    /// A push (``PushRequest``'s `Codable` form) of the common shapes: mutations whose changes are
    /// plain fields, `set`, `unset`, `increment` and `listAppend` operations, an ACL or a delete,
    /// with values of the kinds ``readValue()`` reads. Whatever else (another operation, an
    /// unknown or repeated key, an invalid ID) is ``Unhandled``: `Codable` decides it, which is
    /// the reference and gives the error the client sees.
    package mutating func readPushRequest() throws -> PushRequest {
        var mutations: [Mutation]?
        var compact = false
        try readObject { reader, key in
            switch key {
            case "mutations":
                var list: [Mutation] = []
                try reader.readArray { reader in list.append(try reader.readMutation()) }
                mutations = list
            case "compact":
                compact = try reader.readNull() ? false : try reader.readBool()
            default: throw Unhandled()
            }
        }
        guard let mutations else { throw Unhandled() }
        return PushRequest(mutations: mutations, compact: compact)
    }

    /// The members of a mutation's form (``Mutation``'s `Codable` keys).
    private enum MutationKey: String, CaseIterable, Sendable {
        case mutationId, datastore, className, objectId, baseVersion, change
        static let keys = DocumentKeys(allCases)
    }

    /// The members of a change's form (``ObjectChange``'s `Codable` keys).
    private enum ObjectChangeKey: String, CaseIterable, Sendable {
        case fields, update, acl, delete
        static let keys = DocumentKeys(allCases)
    }

    /// The members of a field's update and of its operation (``FieldUpdate``'s and
    /// ``FieldOperation``'s `Codable` keys).
    private enum UpdateKey: String, CaseIterable, Sendable {
        case field, `do`
        static let keys = DocumentKeys(allCases)
    }

    private enum OperationKey: String, CaseIterable, Sendable {
        case op, value, amount, values
        static let keys = DocumentKeys(allCases)
    }

    /// One mutation of the common shapes (see ``readPushRequest()``); others are ``Unhandled``.
    package mutating func readMutation() throws -> Mutation {
        var mutationId: MutationID?
        var datastore: DatastoreID?
        var className: String?
        var objectId: String?
        var baseVersion: Int64?
        var change: ObjectChange?
        try readObject(MutationKey.keys) { reader, key in
            switch key {
            case .mutationId:
                guard let id = try? MutationID(try reader.readString()) else { throw Unhandled() }
                mutationId = id
            case .datastore: datastore = try reader.readDatastoreID()
            case .className: className = try reader.readClassName()
            case .objectId: objectId = try reader.readString()
            case .baseVersion: baseVersion = try reader.readNull() ? nil : try reader.readInt64()
            case .change: change = try reader.readObjectChange()
            }
        }
        guard let mutationId, let datastore, let className, let objectId, let change else { throw Unhandled() }
        return Mutation(
            mutationId: mutationId, datastore: datastore, className: className, objectId: objectId,
            baseVersion: baseVersion, change: change)
    }

    private mutating func readObjectChange() throws -> ObjectChange {
        var fields: [String: Value]?
        var updates: [FieldUpdate]?
        var acl: ACL?
        var isDelete = false
        var keys = 0
        try readObject(ObjectChangeKey.keys) { reader, key in
            keys += 1
            switch key {
            case .fields: fields = try reader.readNamedFields()
            case .update: updates = try reader.readFieldUpdates()
            case .acl: acl = try reader.readNull() ? nil : try reader.readACL()
            case .delete:
                // Only `true`, and alone: anything else is `Codable`'s to refuse.
                guard try reader.readBool() else { throw Unhandled() }
                isDelete = true
            }
        }
        if isDelete {
            guard keys == 1 else { throw Unhandled() }
            return .delete
        }
        return .update(ObjectChange.updates(fields: fields, then: updates), acl: acl)
    }

    /// A change's or a REST body's `fields`: `nil` for `null`; names that are not valid
    /// identifiers are ``Unhandled``.
    private mutating func readNamedFields() throws -> [String: Value]? {
        guard !(try readNull()) else { return nil }
        let read = try readFields()
        guard read.keys.allSatisfy(Identifier.isValid) else { throw Unhandled() }
        return read
    }

    /// A change's or a REST body's `update`: `nil` for `null`.
    private mutating func readFieldUpdates() throws -> [FieldUpdate]? {
        guard !(try readNull()) else { return nil }
        var list: [FieldUpdate] = []
        try readArray { reader in list.append(try reader.readFieldUpdate()) }
        return list
    }

    private mutating func readFieldUpdate() throws -> FieldUpdate {
        var field: String?
        var operation: FieldOperation?
        try readObject(UpdateKey.keys) { reader, key in
            switch key {
            case .field:
                let name = try reader.readString()
                guard Identifier.isValid(name) else { throw Unhandled() }
                field = name
            case .do: operation = try reader.readFieldOperation()
            }
        }
        guard let field, let operation else { throw Unhandled() }
        return FieldUpdate(field, operation)
    }

    private mutating func readFieldOperation() throws -> FieldOperation {
        var op: String?
        var value: Value?
        var amount: Value?
        var values: [Value]?
        try readObject(OperationKey.keys) { reader, key in
            switch key {
            case .op: op = try reader.readString()
            case .value: value = try reader.readValue()
            case .amount: amount = try reader.readValue()
            case .values:
                var list: [Value] = []
                try reader.readArray { reader in list.append(try reader.readValue()) }
                values = list
            }
        }
        // Each operation has exactly its own members (as `FieldOperation`'s decoding requires).
        switch (op, value, amount, values) {
        case ("set", let value?, nil, nil): return .set(value)
        case ("unset", nil, nil, nil): return .unset
        case ("increment", nil, let amount?, nil): return .increment(amount)
        case ("listAppend", nil, nil, let values?): return .listAppend(values)
        default: throw Unhandled()
        }
    }
}

extension DocumentReader {
    /// The members of a REST write's body (``ObjectWriteBody``'s `Codable` keys).
    private enum ObjectWriteKey: String, CaseIterable, Sendable {
        case objectId, fields, update, acl, baseVersion
        static let keys = DocumentKeys(allCases)
    }

    /// A REST create's or update's body (``ObjectWriteBody``'s `Codable` form) of the common
    /// shapes: plain fields, the operations and values a push's change reads
    /// (``readPushRequest()``), an ACL, a base version. Whatever else (an unknown or repeated key,
    /// an invalid field name, a negative base) is ``Unhandled``: `Codable` decides it, which is the
    /// reference and gives the error the client sees.
    package mutating func readObjectWriteBody() throws -> ObjectWriteBody {
        var body = ObjectWriteBody()
        try readObject(ObjectWriteKey.keys) { reader, key in
            switch key {
            case .objectId: body.objectId = try reader.readNull() ? nil : try reader.readString()
            case .fields: body.fields = try reader.readNamedFields()
            case .update: body.update = try reader.readFieldUpdates()
            case .acl: body.acl = try reader.readNull() ? nil : try reader.readACL()
            case .baseVersion:
                guard !(try reader.readNull()) else { return }
                let version = try reader.readInt64()
                guard version >= 0 else { throw Unhandled() }
                body.baseVersion = version
            }
        }
        return body
    }
}

extension DocumentReader {
    /// A push's answer (``PushResponse``'s `Codable` form) of the common shape: every result
    /// applied, with or without its object, and without merge decisions. Whatever else (a
    /// rejection, merges, an unknown or repeated key, an invalid ID) is ``Unhandled``: `Codable`
    /// decides it, which is the reference.
    package mutating func readPushResponse() throws -> PushResponse {
        var results: [MutationResult]?
        try readObject { reader, key in
            guard key == "results" else { throw Unhandled() }
            var list: [MutationResult] = []
            try reader.readArray { reader in list.append(try reader.readAppliedResult()) }
            results = list
        }
        guard let results else { throw Unhandled() }
        return PushResponse(results: results)
    }

    /// The members of an applied result's form (``MutationResult``'s `Codable` keys, those read).
    private enum ResultKey: String, CaseIterable, Sendable {
        case mutationId, status, version, object
        static let keys = DocumentKeys(allCases)
    }

    /// One applied result without merge decisions (see ``readPushResponse()``).
    private mutating func readAppliedResult() throws -> MutationResult {
        var mutationId: MutationID?
        var applied = false
        var version: Int64?
        var object: ObjectSnapshot?
        try readObject(ResultKey.keys) { reader, key in
            switch key {
            case .mutationId:
                guard let id = try? MutationID(try reader.readString()) else { throw Unhandled() }
                mutationId = id
            case .status:
                guard try reader.readString() == "applied" else { throw Unhandled() }
                applied = true
            case .version: version = try reader.readInt64()
            case .object: object = try reader.readNull() ? nil : try reader.readObjectSnapshot()
            }
        }
        guard let mutationId, applied, let version else { throw Unhandled() }
        return .applied(mutationId: mutationId, version: version, object: object, merges: [])
    }
}

extension PushResponse {
    /// A push's answer from its JSON, read directly when it can be (``DocumentReader``), else
    /// with `Codable` (whose value or error stands): the offline queue reads one per push, each
    /// result with its object, and `JSONDecoder` was a tenth of the queue's time.
    /// - Throws: What `JSONDecoder` throws for data that is not a push's answer.
    package static func decodeDocument(_ data: Data) throws -> PushResponse {
        try DocumentCoding.decode(PushResponse.self, from: data) { try $0.readPushResponse() }
    }
}

extension PushRequest {
    /// A push from its JSON, read directly when it can be (``DocumentReader``), else with
    /// `Codable` (whose value or error stands).
    /// - Throws: What `JSONDecoder` throws for text that is not a push.
    package static func decodeDocument(_ text: String) throws -> PushRequest {
        try DocumentCoding.decode(PushRequest.self, from: text) { try $0.readPushRequest() }
    }
}

extension Mutation {
    /// A mutation from its JSON (a change the client's offline queue stores), read directly
    /// when it can be (``DocumentReader``), else with `Codable`: the queue reads its rows each
    /// time it sends or settles them, and `JSONDecoder` was a tenth of its time.
    /// - Throws: What `JSONDecoder` throws for text that is not a mutation.
    package static func decodeDocument(_ text: String) throws -> Mutation {
        try DocumentCoding.decode(Mutation.self, from: text) { try $0.readMutation() }
    }
}
