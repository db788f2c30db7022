import GRDB
@testable import Rooftop
import Synchronization

/// The statements the local store's writer runs from now on, as SQLite traces them (the writer
/// is one connection: every write of the store runs on it, including statements bound directly).
final class WriterStatements: Sendable {
    private let recorded = Mutex<[String]>([])

    init(_ store: LocalStore, scope: String) throws {
        try store.write(scope: scope) { transaction in
            transaction.db.trace { [self] event in
                let sql = event.description
                self.recorded.withLock { $0.append(sql) }
            }
        }
    }

    /// Every statement recorded, in the order they ran.
    var all: [String] { recorded.withLock { $0 } }

    /// Forgets what was recorded.
    func clear() { recorded.withLock { $0.removeAll() } }
}
