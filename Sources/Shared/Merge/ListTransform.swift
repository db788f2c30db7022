/// Operational transformation for lists: rebases local list operations over concurrent remote
/// ones so that both sides' edits land (the Dropbox Datastore API's conflict-free lists).
///
/// Elements are tracked by identity rather than by index. Each base element gets an identity;
/// the remote operations run first on a copy of the base, then each local operation is replayed
/// on the local copy (to learn which element it means) and translated to an index in the merged
/// list (the remote result with the rebased operations so far):
///
/// - `listAppend` stays an append, after anything remote appended.
/// - `listInsert` lands just before the element that followed it locally (the next one that still
///   exists in the merged list), or at the end. Two inserts at the same index therefore keep the
///   remote element first.
/// - `listRemove` removes the same element; when remote already removed it, it is dropped.
/// - `listMove` moves the same element before the element that follows its destination locally;
///   dropped when remote removed the element. A local move of an element remote also moved wins.
/// - `listReplace` replaces the same element; dropped when remote removed it. When remote also
///   replaced that element, the field's rule picks the element's value (``MergeRule/remote`` keeps
///   the remote value, ``MergeRule/sum`` adds the local difference, and so on).
///
/// The rebased operations always apply without error to the remote result.
enum ListTransform {
    private struct Element {
        var id: Int
        var value: Value
    }

    /// Rebases `local` over `remote`, both sequences of list operations on the same `base` list.
    /// - Parameters:
    ///   - local: The local list operations, in order, valid on `base`.
    ///   - remote: The remote list operations, in commit order, valid on `base`.
    ///   - base: The list both sides started from (an absent field is an empty list).
    ///   - rule: The field's rule, for elements replaced on both sides.
    /// - Returns: Operations valid on the remote result.
    /// - Throws: ``RooftopError/Code/badIndex`` when an operation does not fit its own side's list.
    static func rebase(
        _ local: [FieldOperation], over remote: [FieldOperation], base: [Value], rule: MergeRule
    ) throws(RooftopError) -> [FieldOperation] {
        var nextID = base.count
        func elements(_ values: [Value]) -> [Element] {
            defer { nextID += values.count }
            return values.enumerated().map { Element(id: nextID + $0.offset, value: $0.element) }
        }
        let baseElements = base.enumerated().map { Element(id: $0.offset, value: $0.element) }

        var merged = baseElements
        var remoteReplaced = Set<Int>()
        for operation in remote {
            if let id = try replay(operation, on: &merged, newElements: elements) { remoteReplaced.insert(id) }
        }
        // The remote value of each element remote replaced, before local replacements change it.
        let remoteValues = Dictionary(
            merged.filter { remoteReplaced.contains($0.id) }.map { ($0.id, $0.value) }, uniquingKeysWith: { a, _ in a })

        var localList = baseElements
        var rebased: [FieldOperation] = []
        for operation in local {
            let before = localList
            let replacedID = try replay(operation, on: &localList, newElements: elements)
            switch operation {
            case .listAppend:
                merged.append(contentsOf: localList[before.count...])
                rebased.append(operation)
            case .listInsert(let index, let value):
                let position = anchor(after: localList[(index + 1)...], in: merged)
                merged.insert(localList[index], at: position)
                rebased.append(.listInsert(index: position, value: value))
            case .listRemove(let index):
                guard let position = merged.firstIndex(where: { $0.id == before[index].id }) else { continue }
                merged.remove(at: position)
                rebased.append(.listRemove(index: position))
            case .listMove(let from, let to):
                guard let from = merged.firstIndex(where: { $0.id == before[from].id }) else { continue }
                let element = merged.remove(at: from)
                let to = anchor(after: localList[(to + 1)...], in: merged)
                merged.insert(element, at: to)
                if from != to { rebased.append(.listMove(from: from, to: to)) }
            case .listReplace(_, let value):
                guard let id = replacedID, let position = merged.firstIndex(where: { $0.id == id }) else { continue }
                // Only base elements can be replaced on both sides: each side sees only its own inserts.
                let newValue =
                    if let remoteValue = remoteValues[id], id < base.count {
                        rule.resolvedValue(base: base[id], local: value, remote: remoteValue)
                    } else {
                        value
                    }
                guard newValue != merged[position].value else { continue }
                merged[position].value = newValue
                rebased.append(.listReplace(index: position, value: newValue))
            default:
                throw RooftopError(.internal, "\(operation.name) is not a list operation")
            }
        }
        return rebased
    }

    /// Applies a list operation to tracked elements.
    /// - Returns: The identity of the element replaced, for `listReplace`.
    private static func replay(
        _ operation: FieldOperation, on list: inout [Element], newElements: ([Value]) -> [Element]
    ) throws(RooftopError) -> Int? {
        // Validate exactly as applying does, so both sides agree on what is a bad index.
        _ = try operation.apply(to: .list(list.map(\.value)))
        switch operation {
        case .listAppend(let values):
            list.append(contentsOf: newElements(values))
        case .listInsert(let index, let value):
            list.insert(contentsOf: newElements([value]), at: index)
        case .listRemove(let index):
            list.remove(at: index)
        case .listMove(let from, let to):
            list.insert(list.remove(at: from), at: to)
        case .listReplace(let index, let value):
            list[index].value = value
            return list[index].id
        default:
            throw RooftopError(.internal, "\(operation.name) is not a list operation")
        }
        return nil
    }

    /// The merged index just before the first of `followers` still in `merged`, or the end.
    private static func anchor(after followers: ArraySlice<Element>, in merged: [Element]) -> Int {
        for follower in followers {
            if let position = merged.firstIndex(where: { $0.id == follower.id }) { return position }
        }
        return merged.count
    }
}
