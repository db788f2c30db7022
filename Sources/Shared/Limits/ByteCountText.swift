/// Renders byte counts for limit messages: "120.0 KiB; the limit is 100 KiB".
enum ByteCountText {
    /// The size and the limit, both in the limit's unit (bytes, KiB or MiB). When one decimal
    /// would hide that the size is over the limit ("100.0 KiB" against "100 KiB"), both are given
    /// in bytes instead.
    static func describe(_ size: Int, limit: Int) -> (size: String, limit: String) {
        let (unit, unitName) = unit(for: limit)
        guard unit > 1 else { return ("\(size) bytes", "\(limit) bytes") }
        let sizeTenths = roundedTenths(size, unit: unit)
        let limitTenths = roundedTenths(limit, unit: unit)
        if sizeTenths <= limitTenths && size != limit {
            return ("\(size) bytes", "\(limit) bytes (\(amount(limit, unit: unit)) \(unitName))")
        }
        return ("\(tenthsText(sizeTenths)) \(unitName)", "\(amount(limit, unit: unit)) \(unitName)")
    }

    private static func unit(for limit: Int) -> (Int, String) {
        if limit >= 1024 * 1024 { return (1024 * 1024, "MiB") }
        if limit >= 1024 { return (1024, "KiB") }
        return (1, "bytes")
    }

    /// A whole number of units when exact, one decimal otherwise.
    private static func amount(_ bytes: Int, unit: Int) -> String {
        bytes % unit == 0 ? "\(bytes / unit)" : tenthsText(roundedTenths(bytes, unit: unit))
    }

    private static func roundedTenths(_ bytes: Int, unit: Int) -> Int {
        (bytes * 10 + unit / 2) / unit
    }

    private static func tenthsText(_ tenths: Int) -> String {
        "\(tenths / 10).\(tenths % 10)"
    }
}
