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
        switch record.change {
        case .delete:
            raw("{\"delete\":true}")
        case .update(let updates, let acl):
            raw("{\"update\":[")
            for (index, update) in updates.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                raw("{\"field\":")
                string(update.field)
                raw(",\"do\":")
                try fieldOperation(update.operation)
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "]"))
            if let acl {
                raw(",\"acl\":")
                self.acl(acl)
            }
            bytes.append(UInt8(ascii: "}"))
        }
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
