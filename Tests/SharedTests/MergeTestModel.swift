import RooftopShared

/// A model of the server's side of merging, for tests: a committed log of changes to one object,
/// and pushes rebased over what was committed since their base version.
struct MergeTestServer {
    /// The object's fields at each version (`nil` once deleted); version 0 is the base.
    private(set) var states: [[String: Value]?]
    /// The change committed at version `i + 1`.
    private(set) var log: [ObjectChange] = []
    let className: String
    let rules: MergeRules

    init(base: [String: Value], className: String = "C", rules: MergeRules) {
        self.states = [base]
        self.className = className
        self.rules = rules
    }

    var version: Int { log.count }
    var current: [String: Value]? { states[states.count - 1] }

    /// The server's call site: a push based on `baseVersion` is rebased over the changes
    /// committed since, and the rebased change is applied to the current state.
    @discardableResult
    mutating func push(_ changes: [ObjectChange], baseVersion: Int) throws -> ObjectMerge.Result {
        let merged = try ObjectMerge.rebase(
            local: changes, over: Array(log[baseVersion...]), base: states[baseVersion] ?? [:],
            className: className, rules: rules)
        if let change = merged.change { try commit(change) }
        return merged
    }

    /// Commits a change with no merge (what a push on the current version amounts to).
    mutating func commit(_ change: ObjectChange) throws {
        states.append(try MergeTestServer.apply(change, to: current))
        log.append(change)
    }

    /// An object's fields after a change (`nil` = deleted); an update of a deleted object
    /// recreates it, as an update creates a missing object.
    static func apply(_ change: ObjectChange, to fields: [String: Value]?) throws -> [String: Value]? {
        let snapshot = ObjectSnapshot(className: "C", objectId: "o", fields: fields ?? [:])
        return try snapshot.applying(change)?.fields
    }

    static func apply(_ changes: [ObjectChange], to fields: [String: Value]?) throws -> [String: Value]? {
        var fields = fields
        for change in changes { fields = try apply(change, to: fields) }
        return fields
    }
}

/// Turns random integers into valid list operations, so shrinking works on plain integer arrays.
///
/// Inserted values are unique strings `prefix0`, `prefix1`, ...; a replace appends `*` to the
/// element it replaces, so every element can be traced back to where it was inserted.
enum ListScript {
    static func operations(from codes: [Int], on base: [Value], prefix: String) -> [FieldOperation] {
        var list = base
        var operations: [FieldOperation] = []
        var inserted = 0
        func newValue() -> Value {
            defer { inserted += 1 }
            return .string("\(prefix)\(inserted)")
        }
        for code in codes {
            let kind = list.isEmpty ? code % 2 : code % 5
            let n = list.count
            let operation: FieldOperation =
                switch kind {
                case 0: .listAppend([newValue()])
                case 1: .listInsert(index: (code / 5) % (n + 1), value: newValue())
                case 2: .listRemove(index: (code / 5) % n)
                case 3: .listMove(from: (code / 5) % n, to: (code / 37) % n)
                default: .listReplace(index: (code / 5) % n, value: .string(origin(list[(code / 5) % n]) + "*"))
                }
            operations.append(operation)
            // Scripts are valid by construction; a failure here is a bug in the script.
            if case .list(let next)? = try? operation.apply(to: .list(list)) { list = next }
        }
        return operations
    }

    /// The element's name without replacement marks.
    static func origin(_ value: Value) -> String {
        String((value.stringValue ?? "").prefix { $0 != "*" })
    }

    /// The origins in a list after operations applied to it.
    static func origins(_ value: Value?) -> [String] {
        (value?.listValue ?? []).map(origin)
    }

    /// The base list `b0`, `b1`, ... of a length.
    static func base(count: Int) -> [Value] {
        (0..<count).map { .string("b\($0)") }
    }
}
