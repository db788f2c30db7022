extension ListTransform {
    /// Moves list operations valid on `from` onto `to`, a list of the same elements in another
    /// order, by element: an insert lands before the element it preceded in `from` (or at the
    /// end), a remove or replace takes the same element, appends stay appends. Equal values are
    /// matched by occurrence (the first in `from` is the first in `to`).
    ///
    /// A chain answered again has its own changes committed before some changes of others: the
    /// stored list then holds the same elements as the merge that ``ObjectMerge/rebaseStep(local:after:over:base:current:className:rules:)``
    /// computes, in commit order. Its next list edits move onto that list instead of writing the
    /// whole list (a `set`, which later concurrent list edits would lose to).
    ///
    /// ```swift
    /// ListTransform.transplant([.listInsert(index: 1, value: "x")], from: ["a", "b"], to: ["b", "a"])
    /// // [.listInsert(index: 0, value: "x")]: before "b", as in `from`
    /// ```
    /// - Returns: The operations on `to`; `nil` when `to` is not a reordering of `from`, or for
    ///   an operation that does not fit `from` or is not an insert, append, remove or replace.
    static func transplant(_ operations: [FieldOperation], from: [Value], to: [Value]) -> [FieldOperation]? {
        guard from.count == to.count else { return nil }
        // Element identities: `from`'s positions, matched by occurrence in `to`.
        var source = Array(from.indices)
        var occurrences: [Value: [Int]] = [:]
        for (index, value) in from.enumerated() { occurrences[value, default: []].append(index) }
        var target: [Int] = []
        target.reserveCapacity(to.count)
        for value in to {
            guard var ids = occurrences[value], !ids.isEmpty else { return nil }
            target.append(ids.removeFirst())
            occurrences[value] = ids
        }
        var next = from.count
        var moved: [FieldOperation] = []
        for operation in operations {
            switch operation {
            case .listAppend(let values):
                for _ in values {
                    source.append(next)
                    target.append(next)
                    next += 1
                }
                moved.append(operation)
            case .listInsert(let index, let value):
                guard index >= 0, index <= source.count else { return nil }
                let position: Int
                if index == source.count {
                    position = target.count
                } else {
                    guard let found = target.firstIndex(of: source[index]) else { return nil }
                    position = found
                }
                source.insert(next, at: index)
                target.insert(next, at: position)
                next += 1
                moved.append(.listInsert(index: position, value: value))
            case .listRemove(let index):
                guard source.indices.contains(index), let position = target.firstIndex(of: source[index]) else { return nil }
                source.remove(at: index)
                target.remove(at: position)
                moved.append(.listRemove(index: position))
            case .listReplace(let index, let value):
                guard source.indices.contains(index), let position = target.firstIndex(of: source[index]) else { return nil }
                moved.append(.listReplace(index: position, value: value))
            default:
                return nil
            }
        }
        return moved
    }
}
