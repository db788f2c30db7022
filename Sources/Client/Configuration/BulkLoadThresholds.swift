/// When a first sync loads a datastore in bulk (``ClientConfiguration/bulkInitialSync``), and how
/// often the load's passes build the declared indexes' entries.
///
/// The defaults are the ones measured in docs/benchmarks.md; tests lower them so that a load of a
/// few objects runs every step of one (``ClientConfiguration/bulkLoadThresholds``).
///
/// ```swift
/// configuration.bulkLoadThresholds = BulkLoadThresholds(threshold: 10, passSize: 4, growth: 0)
/// ```
@_spi(Testing)
public struct BulkLoadThresholds: Sendable, Equatable {
    /// Changes a pull from no checkpoint must have ahead of it (as the server counts them) for
    /// its datastore to be loaded in bulk: fewer are written object by object. Default 20,000.
    public var threshold: Int
    /// Objects stored since the last pass that make the next one, at least; a load also begins
    /// only in a datastore holding fewer live objects than this. Default 10,000.
    public var passSize: Int
    /// A pass also waits until the objects without entries are this fraction of those with them:
    /// each pass writes most of the entries' tree, so that a load of `n` objects writes it a
    /// bounded number of times over (about 1 / `growth` + 1), not `n / passSize`. Default 0.25.
    public var growth: Double

    /// Thresholds; the defaults are those of an app.
    public init(threshold: Int = 20_000, passSize: Int = 10_000, growth: Double = 0.25) {
        self.threshold = threshold
        self.passSize = passSize
        self.growth = growth
    }
}
