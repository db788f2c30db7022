import RooftopShared
import Synchronization

/// Pushes and pulls counted per minute, for the dashboard's overview: a ring of the last hour's
/// minutes in this process.
final class ActivityMeter: Sendable {
    /// What is counted.
    enum Kind: Sendable {
        case push, pull
    }

    /// One minute's counts.
    struct Minute: Sendable, Hashable {
        /// The minute, as minutes since the epoch.
        var minute: Int64
        var pushes = 0
        var pulls = 0
    }

    private let clock: ServerClock
    private let minutes = Mutex<[Minute]>([])

    /// The most minutes kept.
    static let kept = 60

    init(clock: ServerClock) {
        self.clock = clock
    }

    /// Counts one request.
    func record(_ kind: Kind) {
        let now = clock.now().millisecondsSinceEpoch / 60_000
        minutes.withLock { minutes in
            if minutes.last?.minute != now {
                minutes.append(Minute(minute: now))
                if minutes.count > Self.kept { minutes.removeFirst(minutes.count - Self.kept) }
            }
            switch kind {
            case .push: minutes[minutes.count - 1].pushes += 1
            case .pull: minutes[minutes.count - 1].pulls += 1
            }
        }
    }

    /// The last `count` minutes, oldest first, ending with the current one (minutes without any
    /// request count zero).
    func last(_ count: Int) -> [Minute] {
        let now = clock.now().millisecondsSinceEpoch / 60_000
        let recorded = minutes.withLock { minutes in Dictionary(minutes.map { ($0.minute, $0) }) { _, newer in newer } }
        let span = Int64(max(1, min(count, Self.kept)))
        return ((now - span + 1)...now).map { recorded[$0] ?? Minute(minute: $0) }
    }
}
