import RooftopShared

/// A query over one class of a datastore, built step by step, run on the server or in the local
/// datastore.
///
/// `RooftopQuery` wraps the shared `Query` (the model the server and the local evaluator
/// share) with where it runs: the datastore, the source (the server — with a ``FetchPolicy`` —,
/// every object stored locally, or one pin label) and whether local runs apply ACLs. Each builder
/// method returns a refined copy; a query is a value and can be kept, shared and run again.
///
/// ```swift
/// let top = try client.query("GameScore")
///     .where(Field("score") > 100)
///     .order(by: "score", descending: true)
///     .limit(10)
///     .including("author")
///     .find(policy: .localAndRemote)
///
/// let mine = try client.query("GameScore")
///     .text("where playerName = ? order by score desc", ["Joe Bob"])
///     .fromLocalDatastore()
///     .find()
/// ```
public struct RooftopQuery: Sendable {
    let core: ClientCore
    /// The shared query: class, predicate, order, page and includes.
    public private(set) var query: Query
    /// The datastore queried (default: the app datastore `:app`).
    public private(set) var datastore: DatastoreID
    /// Where the query runs.
    public private(set) var source: Source
    /// Whether local runs skip the ACL check (Parse's `ignoreACLs`).
    public private(set) var ignoresACLs: Bool

    /// Where a query runs.
    public enum Source: Sendable, Hashable {
        /// On the server, the local cache used as the ``FetchPolicy`` says (the default).
        case server
        /// Over every object stored in the local datastore (pinned, cached or with queued
        /// changes), with unsaved changes (Parse's `fromLocalDatastore`).
        case localDatastore
        /// Over the objects pinned with a label (Parse's `fromPinWithName:`).
        case pin(String)
    }

    init(core: ClientCore, query: Query, datastore: DatastoreID) {
        self.core = core
        self.query = query
        self.datastore = datastore
        self.source = .server
        self.ignoresACLs = false
    }

    /// The class queried.
    public var className: String { query.className }

    /// Whether the query runs in the local datastore whatever the fetch policy.
    public var isLocal: Bool { source != .server }

    // MARK: Building

    /// Adds a condition (combined with `&&` with any condition already there).
    ///
    /// ```swift
    /// let query = client.query("GameScore").where(Field("score") > 100 && Field("cheatMode") == false)
    /// ```
    public func `where`(_ predicate: QueryPredicate) -> RooftopQuery {
        refined { $0.query = $0.query.where(predicate) }
    }

    /// Adds a sort key after the existing ones.
    /// - Parameters:
    ///   - field: The field to sort on.
    ///   - descending: Whether larger values come first (default `false`).
    public func order(by field: String, descending: Bool = false) -> RooftopQuery {
        refined { $0.query = $0.query.order(by: field, descending: descending) }
    }

    /// Sets the most results to return (a page's size). A server applies its default page size
    /// (100) when no limit is set and at most 1000; local runs have no default limit.
    public func limit(_ limit: Int) -> RooftopQuery {
        refined { $0.query = $0.query.limit(limit) }
    }

    /// Sets how many ordered results to skip (the page's start).
    public func offset(_ offset: Int) -> RooftopQuery {
        refined { $0.query = $0.query.offset(offset) }
    }

    /// Adds a pointer path whose objects come with the results: `including("author", "company")`
    /// brings each result's author and the author's company (see ``FetchResult/included``).
    public func including(_ field: String, _ path: String...) -> RooftopQuery {
        refined { $0.query.includes.append([field] + path) }
    }

    /// Adds the clauses of a query in the text form (Backbeam's BQL), `?` standing for the
    /// parameters in order: its condition is combined with `&&`, its sort keys and include paths
    /// are added, and its `limit` / `offset`, when given, replace the query's.
    ///
    /// ```swift
    /// let query = try client.query("GameScore").text("where score > ? and playerName = ? limit 10", [100, "Sean"])
    /// ```
    /// - Parameters:
    ///   - text: The query text (see `Query/parse(className:text:parameters:)` for the grammar).
    ///   - parameters: One value per `?` (default none).
    /// - Throws: `invalidQuery` with `RooftopError/position` at the offending offset, for a
    ///   syntax error or a parameter count that does not match the `?`s.
    public func text(_ text: String, _ parameters: [Value] = []) throws -> RooftopQuery {
        let parsed = try Query.parse(className: query.className, text: text, parameters: parameters)
        return refined { copy in
            if let predicate = parsed.predicate { copy.query = copy.query.where(predicate) }
            copy.query.order += parsed.order
            if let limit = parsed.limit { copy.query.limit = limit }
            if parsed.offset != 0 { copy.query.offset = parsed.offset }
            copy.query.includes += parsed.includes
        }
    }

    /// Adds the clauses of a query in the text form with Swift values for its `?`s (see
    /// the `Value` overload).
    ///
    /// ```swift
    /// let query = try client.query("GameScore").text("where score > ? and playedAt > ?", [minimum, since])
    /// ```
    /// - Throws: `invalidQuery`, as the `Value` overload.
    public func text(_ text: String, _ parameters: [any ValueConvertible]) throws -> RooftopQuery {
        try self.text(text, parameters.map(\.rooftopValue))
    }

    /// Runs the query in another datastore.
    public func `in`(_ datastore: DatastoreID) -> RooftopQuery {
        refined { $0.datastore = datastore }
    }

    /// Runs the query over every object stored in the local datastore — pinned, cached or with
    /// queued changes — seeing unsaved changes, without the network (as in Parse's local datastore).
    public func fromLocalDatastore() -> RooftopQuery {
        refined { $0.source = .localDatastore }
    }

    /// Runs the query over the objects pinned with a label (default: the unnamed pin of
    /// ``RooftopObject/pin(label:)``), without the network (Parse's `fromPinWithName:`).
    public func fromPin(_ label: String? = nil) -> RooftopQuery {
        refined { $0.source = .pin(label ?? LocalStore.defaultLabel) }
    }

    /// Runs the query on the server again (the default source), with a ``FetchPolicy``.
    public func fromServer() -> RooftopQuery {
        refined { $0.source = .server }
    }

    /// Skips the ACL check of local runs: objects whose ACL does not let the current user read
    /// them are included too (Parse's `ignoreACLs`). Role ACLs need not be ignored offline:
    /// the client checks them against the user's cached effective roles. The server always
    /// applies ACLs.
    public func ignoringACLs() -> RooftopQuery {
        refined { $0.ignoresACLs = true }
    }

    private func refined(_ change: (inout RooftopQuery) -> Void) -> RooftopQuery {
        var copy = self
        change(&copy)
        return copy
    }
}
