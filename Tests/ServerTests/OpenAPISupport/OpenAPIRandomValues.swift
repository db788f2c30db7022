import PropertyBased
import RooftopShared
import RooftopTestSupport

/// Random wire values for the schema property test: every value kind from the
/// ``RandomValues/edges`` pools and mutations carrying every field operation.
enum OpenAPIRandomValues {
    /// A batch of values and mutations: one Python run checks a whole batch.
    struct Batch: Sendable {
        var values: [Value]
        var mutations: [Mutation]
    }

    /// Batches of `size` values and `size / 3` mutations.
    static func batch(of size: Int) -> Generator<Batch, Shrink.None<Batch>> {
        Generator { rng in
            Batch(
                values: (0..<size).map { _ in RandomValues.edges.value(&rng, depth: 2) },
                mutations: (0..<size / 3).map { _ in RandomValues.edges.mutation(&rng) })
        }
    }
}
