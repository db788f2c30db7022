/// Bounds on counts a peer sends that the receiver does arithmetic with (totals, estimates):
/// values outside them are malformed, so that sums and differences of them can never overflow.
public enum WireBounds {
    /// The largest count accepted on the wire: 2⁴⁸, far beyond any real datastore, and small
    /// enough that adding thousands of such counts stays inside `Int`.
    public static let maxCount = 1 << 48
}
