import Crypto
import Foundation
import RooftopShared

/// Limits failed sign-ins (passwords and the admin key) per key: a user name from an address, an
/// address, a user name alone.
///
/// - A *hard* key (a name from an address, an address) that has `maxFailures` attempts within
///   `window` refuses further ones with `retryLater` until the oldest leaves the window.
/// - A *soft* key (a name alone, from anywhere) never refuses: past `maxFailures` it asks for a
///   delay before answering, doubling from `baseDelay` up to `maxDelay`. Someone elsewhere can
///   slow a user's log-in down, but cannot lock them out.
///
/// A password attempt is counted when it is *reserved*, before the password is checked, so that
/// many guesses made at once cannot all pass in one window; a success forgives its keys. An admin
/// key is checked and counted in one step (``check(hard:matches:)``). Memory is bounded by
/// construction: keys are kept as 16-byte digests, each with at most `maxFailures + 6` times, and
/// at most `capacity` keys (past that, keys whose attempts all left the window go first, then
/// those least recently used).
///
/// Time comes from an injected clock so that tests need no sleeps. State is per server process;
/// other processes' attempts arrive through ``recordFailure(_:)`` and ``recordSuccess(_:)``.
actor LoginThrottle {
    /// The limits of a throttle.
    struct Policy: Sendable {
        /// Attempts a hard key may make within ``window``; past it, a soft key's delay starts.
        var maxFailures: Int
        /// The window attempts are counted in.
        var window: Duration
        /// The most keys kept (default 20,000: a few megabytes).
        var capacity: Int = 20_000
        /// A soft key's first delay (default 250 ms), doubled at each further attempt.
        var baseDelay: Duration = .milliseconds(250)
        /// The longest delay (default 4 s).
        var maxDelay: Duration = .seconds(4)
    }

    /// The attempts reserved by ``reserve(hard:soft:)``: the keys they count against, and how
    /// long to wait before checking the credentials.
    struct Reservation: Sendable {
        /// Every key the attempt counts against, hard and soft (as sent to other processes).
        var keys: [String]
        /// The delay the soft keys ask for; zero under their limit.
        var delay: Duration
    }

    private struct Entry {
        /// The attempts within the window (or just past it), oldest first.
        var attempts: [ContinuousClock.Instant]
    }

    private let policy: Policy
    /// Where windows are measured (its monotonic reading).
    private let clock: ServerClock
    private var entries: [ThrottleKey: Entry] = [:]

    /// A throttle with `policy`, its windows measured on `clock` (default: the system's).
    init(policy: Policy, clock: ServerClock = .system) {
        self.policy = policy
        self.clock = clock
    }

    /// How many keys are kept now.
    var keyCount: Int { entries.count }

    /// The most times a key keeps: enough for a soft key's delay to reach its maximum.
    private var attemptsKept: Int { policy.maxFailures + 6 }

    /// Counts an attempt against every key, unless a hard key has used up its attempts.
    /// - Returns: The reservation, with the delay the soft keys ask for.
    /// - Throws: ``RetryLaterError`` (`retryLater`, with the seconds to wait) when a hard key is
    ///   at its limit; nothing is counted then.
    func reserve(hard: [String], soft: [String] = []) throws(RetryLaterError) -> Reservation {
        let current = clock.monotonic()
        try refuseIfLimited(hard, at: current)
        var delay = Duration.zero
        for key in soft {
            let excess = attempts(of: ThrottleKey(key), at: current).count + 1 - policy.maxFailures
            guard excess > 0 else { continue }
            delay = max(delay, min(policy.maxDelay, policy.baseDelay * (1 << min(excess - 1, 20))))
        }
        record(hard + soft, at: current)
        return Reservation(keys: hard + soft, delay: delay)
    }

    /// Checks credentials that need no waiting (the admin key) in one step: refuses when a hard
    /// key is at its limit, else counts a failure against every key when `matches` is false. A
    /// success forgives nothing: failures leave with the window, so that a right key sent meanwhile
    /// (here or in another process) cannot wipe out an attacker's count from the same address.
    /// - Throws: ``RetryLaterError`` when throttled, whether `matches` or not.
    func check(hard: [String], matches: Bool) throws(RetryLaterError) {
        let current = clock.monotonic()
        try refuseIfLimited(hard, at: current)
        if !matches { record(hard, at: current) }
    }

    /// Throws when a hard key has used up its attempts.
    private func refuseIfLimited(_ hard: [String], at current: ContinuousClock.Instant) throws(RetryLaterError) {
        for key in hard {
            let recent = attempts(of: ThrottleKey(key), at: current)
            guard recent.count >= policy.maxFailures else { continue }
            // Waiting until enough attempts leave the window for one more.
            let wait = policy.window - (current - recent[recent.count - policy.maxFailures])
            let seconds = max(1, Int(wait.components.seconds) + 1)
            throw RetryLaterError(
                error: RooftopError(.retryLater, "too many failed sign-ins; try again in \(seconds) s"),
                retryAfterSeconds: seconds)
        }
    }

    /// Forgives a reservation after a success (see ``forget(_:releasingAddressSlot:)``).
    func forgive(_ reservation: Reservation) {
        forget(reservation.keys, releasingAddressSlot: true)
    }

    /// Records failures made through another server process.
    func recordFailure(_ keys: [String]) {
        record(keys, at: clock.monotonic())
    }

    /// Forgets the keys' attempts after a success made through another server process.
    func recordSuccess(_ keys: [String]) {
        // The success took no slot here: the address keeps every failure it was told of.
        forget(keys, releasingAddressSlot: false)
    }

    /// The key's attempts within the window, and drops the older ones.
    private func attempts(of key: ThrottleKey, at current: ContinuousClock.Instant) -> [ContinuousClock.Instant] {
        guard var entry = entries[key] else { return [] }
        entry.attempts.removeAll { current - $0 >= policy.window }
        entries[key] = entry.attempts.isEmpty ? nil : entry
        return entry.attempts
    }

    private func record(_ keys: [String], at current: ContinuousClock.Instant) {
        for text in keys {
            let key = ThrottleKey(text)
            if entries[key] == nil { makeRoom(at: current) }
            var attempts = entries[key]?.attempts ?? []
            attempts.append(current)
            if attempts.count > attemptsKept { attempts.removeFirst(attempts.count - attemptsKept) }
            entries[key] = Entry(attempts: attempts)
        }
    }

    /// After a success: the name's keys lose their attempts, but an address key only this
    /// attempt's slot — a log-in to one's own account must not wipe the guesses the address made
    /// at other accounts (that would let one address spray guesses over any number of them).
    private func forget(_ keys: [String], releasingAddressSlot: Bool) {
        for text in keys {
            let key = ThrottleKey(text)
            if text.hasPrefix(ThrottleKeys.addressPrefix) {
                guard releasingAddressSlot, var entry = entries[key], !entry.attempts.isEmpty else { continue }
                entry.attempts.removeLast()
                entries[key] = entry.attempts.isEmpty ? nil : entry
            } else {
                entries[key] = nil
            }
        }
    }

    /// Before a new key at capacity: drops the keys whose attempts all left the window; when that
    /// frees less than a tenth, the least recently used down to nine tenths (so that this
    /// O(n log n) pass runs at most once per tenth of the capacity added).
    private func makeRoom(at current: ContinuousClock.Instant) {
        guard entries.count >= policy.capacity else { return }
        entries = entries.filter { current - ($0.value.attempts.last ?? current) < policy.window }
        let target = policy.capacity - max(1, policy.capacity / 10)
        guard entries.count > target else { return }
        let byLastUse = entries.sorted { ($0.value.attempts.last ?? current) < ($1.value.attempts.last ?? current) }
        for (key, _) in byLastUse.prefix(entries.count - target) { entries[key] = nil }
    }
}

/// A throttle key as kept: the first 16 bytes of the SHA-256 of its text, so that every key takes
/// the same small room whatever its length.
struct ThrottleKey: Hashable, Sendable {
    private let high: UInt64
    private let low: UInt64

    init(_ text: String) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in SHA256.hash(data: Data(text.utf8)).prefix(16).enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }
}

/// The throttle keys of a sign-in.
enum ThrottleKeys {
    /// A password log-in: hard per (name, address) and per address, soft per name. A name counts
    /// by its key (``SignUpRequest/usernameKey(_:)``), so that `Alice` and `alice` are one name
    /// here too. An unknown address (no TCP peer, as in in-process tests) counts as one address,
    /// `unknown`.
    static func logIn(usernameKey: String, address: String?) -> (hard: [String], soft: [String]) {
        let address = address ?? "unknown"
        return (["user-at:" + address + "|" + usernameKey, addressPrefix + address], ["user:" + usernameKey])
    }

    /// The prefix of a log-in's per-address key, which a success does not clear.
    static let addressPrefix = "address:"


    /// An admin key (REST, live upgrade or dashboard): hard per address (`unknown` when unknown).
    static func adminKey(address: String?) -> [String] {
        ["admin-key:" + (address ?? "unknown")]
    }
}

/// A `retryLater` refusal with the number of seconds to wait, sent as `Retry-After`.
struct RetryLaterError: Error, Sendable {
    /// The error answered.
    var error: RooftopError
    /// Seconds to wait before retrying.
    var retryAfterSeconds: Int
}
