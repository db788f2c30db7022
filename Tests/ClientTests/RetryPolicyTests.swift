import Foundation
import PropertyBased
@testable import Rooftop
import Testing

/// The backoff schedule of ``RetryPolicy``: exponential growth, the cap, and the jitter spread.
@Suite struct RetryPolicyTests {
    /// Milliseconds of a duration, for comparisons with the policy's millisecond rounding.
    private func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    @Test func delaysDoubleUntilTheCap() {
        let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(60), multiplier: 2, jitter: 0)
        let delays = (1...9).map { policy.delay(beforeAttempt: $0, random: 0.3) }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
    }

    @Test func growthFollowsTheMultiplier() {
        let policy = RetryPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(100), multiplier: 3, jitter: 0)
        let delays = (1...4).map { policy.delay(beforeAttempt: $0, random: 0) }
        #expect(delays == [.milliseconds(500), .milliseconds(1500), .milliseconds(4500), .milliseconds(13_500)])
    }

    @Test func attemptsBelowOneCountAsTheFirst() {
        let policy = RetryPolicy(initialDelay: .seconds(2), jitter: 0)
        #expect(policy.delay(beforeAttempt: 0, random: 0.5) == .seconds(2))
        #expect(policy.delay(beforeAttempt: -7, random: 0.5) == .seconds(2))
    }

    @Test func hugeAttemptNumbersStayAtTheCap() {
        // 2^9999 overflows to infinity; the cap must still apply.
        let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30), multiplier: 2, jitter: 0)
        #expect(policy.delay(beforeAttempt: 10_000, random: 0.5) == .seconds(30))
        #expect(policy.delay(beforeAttempt: Int.max, random: 0.5) == .seconds(30))
    }

    @Test func jitterSpansBothSidesOfTheDelay() {
        let policy = RetryPolicy(initialDelay: .seconds(10), maximumDelay: .seconds(60), multiplier: 2, jitter: 0.2)
        #expect(policy.delay(beforeAttempt: 1, random: 0) == .seconds(8))
        #expect(policy.delay(beforeAttempt: 1, random: 0.5) == .seconds(10))
        #expect(milliseconds(policy.delay(beforeAttempt: 1, random: 0.999_999)) >= 11_999)
        // Jitter spreads the capped delay too.
        #expect(policy.delay(beforeAttempt: 5, random: 0) == .seconds(48))
    }

    @Test func defaultPolicy() {
        let policy = RetryPolicy.default
        #expect(policy.initialDelay == .seconds(1))
        #expect(policy.maximumDelay == .seconds(60))
        #expect(policy.multiplier == 2)
        #expect(policy.jitter == 0.2)
    }

    @Test func everyDelayLiesWithinTheJitterBoundsOfTheCappedDelay() async {
        await propertyCheck(
            count: 500, input: Gen.int(in: 1...40), Gen.double(in: 0..<1), Gen.double(in: 0...1),
            Gen.int(in: 1...5_000)
        ) { attempt, random, jitter, initialMilliseconds in
            let policy = RetryPolicy(
                initialDelay: .milliseconds(initialMilliseconds), maximumDelay: .seconds(60), multiplier: 2,
                jitter: jitter)
            let capped = min(Double(initialMilliseconds) * pow(2, Double(attempt - 1)), 60_000)
            let delay = milliseconds(policy.delay(beforeAttempt: attempt, random: random))
            // One millisecond of slack for the policy's rounding down to milliseconds.
            #expect(delay >= capped * (1 - jitter) - 1)
            #expect(delay <= capped * (1 + jitter))
        }
    }

    @Test func delaysNeverShrinkAsAttemptsGrowWithoutJitter() async {
        await propertyCheck(count: 300, input: Gen.int(in: 1...60), Gen.int(in: 1...10_000)) { attempt, initial in
            let policy = RetryPolicy(
                initialDelay: .milliseconds(initial), maximumDelay: .seconds(45), multiplier: 1.7, jitter: 0)
            let this = policy.delay(beforeAttempt: attempt, random: 0.5)
            let next = policy.delay(beforeAttempt: attempt + 1, random: 0.5)
            #expect(this <= next)
            #expect(next <= .seconds(45))
        }
    }
}
