/// A query over the objects of one class: a predicate, an order, a page and pointer includes.
///
/// One query model serves every form: the Swift builder (``where(_:)``, ``order(by:descending:)``,
/// ...), the text form with `?` parameters (``parse(className:text:parameters:)``,
/// ``textForm``) and the JSON wire form (`Codable`). The server compiles it to SQL and the client
/// runs it with ``QueryEvaluator``; ``QueryPredicate`` documents the semantics both follow.
///
/// Results are ordered by ``order`` (then by `objectId`, so they are deterministic), then
/// ``offset`` results are skipped and at most ``limit`` returned.
///
/// ```swift
/// let query = Query("GameScore")
///     .where(Field("score") > 100 && Field("name") == "Sean")
///     .order(by: "score", descending: true)
///     .limit(10)
///     .including("author")
/// ```
///
/// Wire form (keys other than `className` optional on decoding; unknown keys are refused):
/// `{"className": "GameScore", "predicate": {...}, "order": [{"field": "score", "descending":
/// true}], "limit": 10, "offset": 0, "includes": [["author"], ["author", "company"]]}`.
public struct Query: Hashable, Sendable {
    /// The class (table) queried.
    public var className: String
    /// The condition results meet; `nil` matches every object.
    public var predicate: QueryPredicate?
    /// The sort keys, most significant first. Empty means by `objectId`, or by distance when the
    /// predicate has a `near` condition (see ``QueryPredicate``).
    public var order: [QueryOrder]
    /// The most results to return; `nil` for no limit in local evaluation. A server answers a
    /// query without a limit with its default page size (``Limits/defaultQueryLimit``) and clamps
    /// any limit to ``Limits/maxQueryLimit``.
    public var limit: Int?
    /// How many ordered results to skip (default 0).
    public var offset: Int
    /// Pointer paths whose targets are returned with the results, e.g. `[["author"], ["author",
    /// "company"]]`: each path is a list of field names followed one after the other.
    public var includes: [[String]]

    /// The default for ``validate(maxDepth:)``: how deeply predicates may nest.
    public static let defaultMaxDepth = 16

    /// Creates a query.
    /// - Parameters:
    ///   - className: The class queried.
    ///   - predicate: The condition (default `nil`: every object).
    ///   - order: Sort keys (default none).
    ///   - limit: The most results (default `nil`: no limit).
    ///   - offset: Results to skip (default 0).
    ///   - includes: Pointer paths to include (default none).
    public init(
        className: String,
        predicate: QueryPredicate? = nil,
        order: [QueryOrder] = [],
        limit: Int? = nil,
        offset: Int = 0,
        includes: [[String]] = []
    ) {
        self.className = className
        self.predicate = predicate
        self.order = order
        self.limit = limit
        self.offset = offset
        self.includes = includes
    }

    /// A query of every object of a class, to refine with the builder methods.
    ///
    /// ```swift
    /// let recent = Query("Post").order(by: "createdAt", descending: true).limit(20)
    /// ```
    public init(_ className: String) {
        self.init(className: className)
    }
}
