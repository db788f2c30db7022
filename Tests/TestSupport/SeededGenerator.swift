import Foundation

/// SplitMix64: a small, fast generator whose whole state is its seed, so a failing run of a
/// randomized test is replayed exactly by running it again with the seed it printed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    /// The seed this generator started from, for messages.
    public let seed: UInt64
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ items: [T]) -> T {
        precondition(!items.isEmpty, "pick from an empty pool")
        return items[Int.random(in: 0..<items.count, using: &self)]
    }

    /// A number in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// True with probability `percent` / 100.
    public mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &self) < percent
    }

    /// A random subset of `items`, each kept with probability `percent` / 100, in their order.
    public mutating func subset<T>(_ items: [T], percent: Int) -> [T] {
        items.filter { _ in chance(percent) }
    }

    /// `count` distinct elements of `items` (all of them when it has fewer), in a random order.
    public mutating func subset<T>(_ items: [T], count: Int) -> [T] {
        Array(items.shuffled(using: &self).prefix(count))
    }
}

/// Seeds for randomized tests: the fixed ones always run (so CI is reproducible); the
/// `ROOFTOP_TEST_SEEDS` environment variable (comma-separated integers) replaces them, to replay a
/// failure or to search more widely.
public enum TestSeeds {
    /// The seeds to run: `ROOFTOP_TEST_SEEDS` when set, else `fixed`.
    public static func seeds(fixed: [UInt64]) -> [UInt64] {
        guard let text = ProcessInfo.processInfo.environment["ROOFTOP_TEST_SEEDS"] else { return fixed }
        let parsed = text.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        return parsed.isEmpty ? fixed : parsed
    }
}
