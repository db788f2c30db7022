/// The most recent distinct members inserted, at most `capacity` of them: past it, the oldest
/// member is forgotten to make room. Constant time per insertion, memory bounded by `capacity`.
///
/// ```swift
/// var said = RecentSet<String>(capacity: 2)
/// said.insert("a")  // true: new
/// said.insert("a")  // false: already there
/// said.insert("b"); said.insert("c")  // "a" is forgotten
/// ```
struct RecentSet<Element: Hashable> {
    /// The most members kept.
    let capacity: Int
    private var members: Set<Element> = []
    /// Members in insertion order, a ring once full; `next` is the oldest then.
    private var order: [Element] = []
    private var next = 0

    /// An empty set keeping at most `capacity` members (at least one).
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// The number of members kept.
    var count: Int { members.count }

    /// Whether `member` is kept.
    func contains(_ member: Element) -> Bool { members.contains(member) }

    /// Inserts `member`, forgetting the oldest member when full.
    /// - Returns: Whether it was new (not kept already).
    @discardableResult
    mutating func insert(_ member: Element) -> Bool {
        guard members.insert(member).inserted else { return false }
        if order.count < capacity {
            order.append(member)
        } else {
            members.remove(order[next])
            order[next] = member
            next = (next + 1) % capacity
        }
        return true
    }
}
