import PropertyBased
import RooftopShared
import RooftopTestSupport

extension Gen where Value == RooftopShared.Value {
    /// Any value (``RandomValues/edges``), lists nested up to two levels.
    static var anyValue: Generator<RooftopShared.Value, Shrink.None<RooftopShared.Value>> {
        Generator { rng in RandomValues.edges.value(&rng, depth: 2) }
    }

    /// Numbers and nearby kinds, so that equal and close values come up often.
    static var numericValue: Generator<RooftopShared.Value, Shrink.None<RooftopShared.Value>> {
        Generator { rng in
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: .int(RandomValues.edges.int(&rng))
            case 1: .double(RandomValues.edges.double(&rng))
            default: .int(Int64.random(in: -3...3, using: &rng))
            }
        }
    }
}
