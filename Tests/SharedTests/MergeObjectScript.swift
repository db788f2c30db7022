import RooftopShared

/// Turns random integers into valid changes of one object over a few fields of different kinds,
/// for property tests of object merges.
enum MergeObjectScript {
    /// `n` holds numbers, `s` strings, `l` a list, `r` a relation; each also gets sets of other kinds.
    static let fields = ["n", "s", "l", "r"]

    /// The base object of the scripts.
    static let base: [String: Value] = [
        "n": 10, "s": "base", "l": ["b0", "b1", "b2"],
        "r": .relation(Relation(className: "_User", objectIds: ["a", "b"])),
    ]

    /// Changes valid in order on `base`, one field update each (every eleventh also sets an ACL),
    /// optionally ending in a delete.
    static func changes(from codes: [Int], on base: [String: Value], prefix: String, deleteAtEnd: Bool)
        -> [ObjectChange]
    {
        var fields = base
        var changes: [ObjectChange] = []
        for (position, code) in codes.enumerated() {
            let field = Self.fields[code % Self.fields.count]
            let operation = operation(code / 4, field: field, current: fields[field], prefix: "\(prefix)\(position)-")
            let acl: ACL? = code % 11 == 0 ? ACL.only("\(prefix)\(code)") : nil
            let change = ObjectChange.update([FieldUpdate(field, operation)], acl: acl)
            // Keep only changes valid where they are made, as a real client would.
            guard let next = try? MergeTestServer.apply(change, to: fields) else { continue }
            fields = next
            changes.append(change)
        }
        if deleteAtEnd { changes.append(.delete) }
        return changes
    }

    private static func operation(_ code: Int, field: String, current: Value?, prefix: String) -> FieldOperation {
        switch field {
        case "n":
            switch code % 6 {
            case 0: return .set(.int(Int64(code % 100)))
            case 1, 2, 3: return .increment(.int(Int64(code % 7 - 3)))
            case 4: return .unset
            default: return .set(.string("n\(code % 3)"))
            }
        case "s":
            switch code % 4 {
            case 0, 1: return .set(.string("\(prefix)s"))
            case 2: return .unset
            default: return .set(.int(Int64(code % 5)))
            }
        case "l":
            if code % 9 == 8 { return .set(.list([.string("\(prefix)set")])) }
            if code % 9 == 7 { return .unset }
            return ListScript.operations(from: [code / 9], on: current?.listValue ?? [], prefix: prefix)[0]
        default:
            let ids = ["a", "b", "c", "d"]
            let id = ids[(code / 3) % ids.count]
            switch code % 7 {
            case 0, 1, 2: return .relationAdd(className: "_User", objectIds: [id])
            case 3, 4: return .relationRemove(className: "_User", objectIds: [id])
            case 5: return .unset
            default: return .relationAdd(className: "Team", objectIds: [id])
            }
        }
    }
}
