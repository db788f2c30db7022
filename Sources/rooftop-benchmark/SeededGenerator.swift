/// A small, fast, seedable random number generator (SplitMix64), so that `--seed` reproduces the
/// same data set and the same query parameters on every run and platform.
///
/// ```swift
/// var random = SeededGenerator(seed: 42)
/// let score = Int.random(in: 0..<1_000, using: &random)
/// ```
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence depends only on `seed`.
    init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent generator for a sub-task (a client, a phase): the same seed and `stream`
    /// always give the same sequence, whatever ran before.
    func derived(_ stream: UInt64) -> SeededGenerator {
        var mixer = SeededGenerator(seed: state ^ (stream &* 0xD1B5_4A32_D192_ED03))
        return SeededGenerator(seed: mixer.next())
    }
}
