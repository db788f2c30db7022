import RooftopShared

/// Which objects of a datastore a client keeps in sync: every class, some classes
/// (`PullRequest.classes`), and per class an optional query predicate an object must match.
///
/// A pull records the scope its checkpoint covers. Pulling later with another scope fetches or
/// drops only the difference:
/// - **Narrowing** (fewer classes, a predicate added or changed): nothing is fetched; the local
///   copies that left the scope are dropped (their sync pin goes, so objects still pinned under
///   another label or with queued changes stay).
/// - **Widening classes**: the added classes are pulled from the beginning (only them), then the
///   regular pull continues from the stored checkpoint. Widening from some classes to every class
///   pulls everything from the beginning (a pull cannot name "all but these").
/// - **Widening or changing a predicate**: that class is pulled from the beginning, keeping the
///   objects that match (the server cannot send "what matches the new predicate but not the old").
///
/// ```swift
/// // Keep only open tasks, and the projects.
/// let scope = SyncScope(classes: ["Task", "Project"], filters: ["Task": .comparison(field: "done", op: .equal, value: false)])
/// try await client.sync.pull(datastore: .default, scope: scope)
/// ```
public struct SyncScope: Sendable, Hashable, Codable {
    /// The classes kept in sync; `nil` for every class.
    public var classes: Set<String>?
    /// Per class, the predicate an object must match to be kept (objects of other classes are
    /// kept whole).
    public var filters: [String: QueryPredicate]

    /// A scope.
    /// - Parameters:
    ///   - classes: The classes to keep (default `nil`: every class).
    ///   - filters: Predicates by class name (default none).
    public init(classes: Set<String>? = nil, filters: [String: QueryPredicate] = [:]) {
        self.classes = classes
        self.filters = filters
    }

    /// Every object of the datastore (the default).
    public static let everything = SyncScope()

    /// Only objects of these classes.
    public static func classes(_ names: String...) -> SyncScope { SyncScope(classes: Set(names)) }

    /// Only objects of the query's class that match its predicate (order, limit and includes are
    /// not part of a sync scope).
    public static func query(_ query: Query) -> SyncScope {
        SyncScope(classes: [query.className], filters: query.predicate.map { [query.className: $0] } ?? [:])
    }

    /// Whether objects of a class are in the scope (at least those matching its predicate).
    public func contains(className: String) -> Bool { classes?.contains(className) ?? true }

    /// Whether an object belongs in the scope.
    public func keeps(_ object: ObjectSnapshot) -> Bool {
        guard contains(className: object.className) else { return false }
        guard let predicate = filters[object.className] else { return true }
        return QueryEvaluator.matches(object, predicate)
    }

    /// The classes to pull, as a pull request names them (`nil`: all).
    var pullClasses: [String]? { classes.map { $0.sorted() } }

    /// What moving from `old` (the scope the stored checkpoint covers) to this scope takes.
    func transition(from old: SyncScope) -> Transition {
        guard old != self else { return Transition(narrows: false, catchUp: .nothing) }
        let catchUp: CatchUp
        if let classes {
            // Classes added, and classes whose predicate was removed or changed (maybe wider).
            var added = classes.subtracting(old.classes ?? classes)
            for name in classes where old.contains(className: name) {
                if let before = old.filters[name], filters[name] != before { added.insert(name) }
            }
            catchUp = added.isEmpty ? .nothing : .classes(added)
        } else if old.classes != nil {
            catchUp = .everything
        } else {
            let changed = Set(old.filters.compactMap { name, before in filters[name] != before ? name : nil })
            catchUp = changed.isEmpty ? .nothing : .classes(changed)
        }
        let dropsClasses = classes.map { mine in old.classes.map { !$0.isSubset(of: mine) } ?? true } ?? false
        let tightens = filters.contains { old.filters[$0.key] != $0.value }
        return Transition(narrows: dropsClasses || tightens, catchUp: catchUp)
    }

    /// What to pull from the beginning when a scope widens.
    enum CatchUp: Equatable {
        /// Nothing.
        case nothing
        /// These classes.
        case classes(Set<String>)
        /// Every class.
        case everything
    }

    /// The work a change of scope takes.
    struct Transition: Equatable {
        /// Whether local copies may have left the scope (drop them).
        var narrows: Bool
        /// What to pull from the beginning first.
        var catchUp: CatchUp
    }
}
