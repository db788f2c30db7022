extension Duration {
    /// The duration in whole milliseconds (rounded toward zero), saturating at `Int64.min` and
    /// `Int64.max` instead of trapping for durations of more than about 292 million years.
    ///
    /// ```swift
    /// Duration.seconds(1.5).saturatingMilliseconds      // 1500
    /// Duration.seconds(Int64.max).saturatingMilliseconds // Int64.max
    /// ```
    public var saturatingMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, carry) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if carry { return seconds < 0 ? .min : .max }
        return total
    }

    /// A duration of `milliseconds`, clamped to what `Int64` milliseconds hold (NaN is zero).
    public static func clampedMilliseconds(_ milliseconds: Double) -> Duration {
        guard !milliseconds.isNaN else { return .zero }
        // 2⁶³ is exactly representable; anything at or beyond it is clamped.
        if milliseconds >= 9_223_372_036_854_775_807.0 { return .milliseconds(Int64.max) }
        if milliseconds <= -9_223_372_036_854_775_808.0 { return .milliseconds(Int64.min) }
        return .milliseconds(Int64(milliseconds))
    }
}

extension Int64 {
    /// `self + other`, or `Int64.max`/`Int64.min` where the sum does not fit.
    public func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
