import Foundation

extension DocumentWriter {
    /// An operation in ``OperationRecord``'s `Codable` form: the change as `update` operations
    /// (never plain `fields`: the same updates, in the same order), the prior values with
    /// explicit presence (`{"value": v}` or `{}`), the origin when there is one.
    /// - Throws: What `JSONEncoder` throws for the kinds left to it.
    package mutating func operationRecord(_ record: OperationRecord) throws {
        raw("{\"version\":")
        int(record.version)
        raw(",\"change\":")
        try objectChange(record.change)
        raw(",\"priorValues\":{")
        var first = true
        for (field, prior) in record.priorValues {
            key(field, first: first)
            first = false
            if let prior {
                raw("{\"value\":")
                try value(prior)
                bytes.append(UInt8(ascii: "}"))
            } else {
                raw("{}")
            }
        }
        bytes.append(UInt8(ascii: "}"))
        if let origin = record.origin {
            raw(",\"origin\":")
            string(origin)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A change in ``ObjectChange``'s `Codable` form: `{"delete":true}`, or its updates with the
    /// ACL when it sets one. The updates are all `update` operations by default (the same
    /// updates, in the same order: what is stored); with `plainFields`, the leading plain sets
    /// (``ObjectChange/plainPrefixCount(_:)``) are `fields`, as `Codable` writes them (what a
    /// push sends).
    /// - Throws: What `JSONEncoder` throws for the kinds left to it.
    package mutating func objectChange(_ change: ObjectChange, plainFields: Bool = false) throws {
        switch change {
        case .delete:
            raw("{\"delete\":true}")
        case .update(let updates, let acl):
            let plain = plainFields ? ObjectChange.plainPrefixCount(updates) : 0
            bytes.append(UInt8(ascii: "{"))
            if plain > 0 {
                raw("\"fields\":{")
                var first = true
                for update in updates.prefix(plain) {
                    // Every one a set (``ObjectChange/plainPrefixCount(_:)``).
                    guard case .set(let value) = update.operation else { continue }
                    key(update.field, first: first)
                    first = false
                    try self.value(value)
                }
                bytes.append(UInt8(ascii: "}"))
            }
            if plain == 0 || plain < updates.count {
                if plain > 0 { bytes.append(UInt8(ascii: ",")) }
                raw("\"update\":[")
                for (index, update) in updates.dropFirst(plain).enumerated() {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    raw("{\"field\":")
                    string(update.field)
                    raw(",\"do\":")
                    try fieldOperation(update.operation)
                    bytes.append(UInt8(ascii: "}"))
                }
                bytes.append(UInt8(ascii: "]"))
            }
            if let acl {
                raw(",\"acl\":")
                self.acl(acl)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// A change in the form ``Mutation``'s `Codable` conformance reads (`baseVersion` absent
    /// when `nil`; the change as ``objectChange(_:plainFields:)`` writes it).
    /// - Throws: What `JSONEncoder` throws for the kinds left to it.
    package mutating func mutation(_ mutation: Mutation, plainFields: Bool = false) throws {
        bytes.append(UInt8(ascii: "{"))
        if let baseVersion = mutation.baseVersion {
            raw("\"baseVersion\":")
            int(baseVersion)
            bytes.append(UInt8(ascii: ","))
        }
        raw("\"change\":")
        try objectChange(mutation.change, plainFields: plainFields)
        raw(",\"className\":")
        string(mutation.className)
        raw(",\"datastore\":")
        string(mutation.datastore.rawValue)
        raw(",\"mutationId\":")
        string(mutation.mutationId.rawValue)
        raw(",\"objectId\":")
        string(mutation.objectId)
        bytes.append(UInt8(ascii: "}"))
    }

    /// An operation in ``FieldOperation``'s `Codable` form; the list moves and relations are left
    /// to `JSONEncoder`.
    private mutating func fieldOperation(_ operation: FieldOperation) throws {
        switch operation {
        case .set(let value):
            raw("{\"op\":\"set\",\"value\":")
            try self.value(value)
            bytes.append(UInt8(ascii: "}"))
        case .unset:
            raw("{\"op\":\"unset\"}")
        case .increment(let amount):
            raw("{\"op\":\"increment\",\"amount\":")
            try value(amount)
            bytes.append(UInt8(ascii: "}"))
        case .listAppend(let values):
            raw("{\"op\":\"listAppend\",\"values\":[")
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try value(element)
            }
            raw("]}")
        case .listInsert, .listRemove, .listMove, .listReplace, .relationAdd, .relationRemove:
            try encoded(operation)
        }
    }
}

extension OperationRecord {
    /// The operation's JSON as stored, written directly (``DocumentWriter/operationRecord(_:)``).
    /// - Throws: What `JSONEncoder` throws for the values it writes.
    package func encodedDocument() throws -> String {
        var writer = DocumentWriter(capacity: 256)
        try writer.operationRecord(self)
        return writer.text
    }
}

extension Mutation {
    /// The mutation's JSON as the offline queue stores it, written directly
    /// (``DocumentWriter/mutation(_:)``; `JSONEncoder` took a tenth of a queued save's time).
    /// - Throws: What `JSONEncoder` throws for the values it writes.
    package func encodedDocument() throws -> String {
        var writer = DocumentWriter(capacity: 256)
        try writer.mutation(self)
        return writer.text
    }
}
