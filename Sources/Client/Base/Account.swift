import RooftopShared
import Synchronization

/// The signed-in account as the client keeps it: its session (saved in the local store, restored
/// across restarts), the scope of local rows (the user's ID, `""` without an account) and the
/// effective roles offline ACL checks use. The core and the sync engines share one.
final class Account: Sendable {
    private let store: LocalStore
    private let session: Mutex<StoredSession?>
    /// Held by each change of the session (sign-in, sign-out, a new user or new roles) while it
    /// reads, saves and sets it: one change at a time, so that roles a pull read before a sign-out
    /// cannot bring the signed-out session back (in memory and on disk), nor a sign-in be paired
    /// with the previous user. Reading the session does not wait for it.
    private let changes = Mutex(())

    /// The account of the session `store` saved (none when `nil`).
    init(store: LocalStore, restored: StoredSession?) {
        self.store = store
        self.session = Mutex(restored)
    }

    /// The signed-in session, if any.
    var current: StoredSession? { session.withLock { $0 } }

    /// The scope of local rows: the signed-in user's ID, or `""` without an account.
    var scope: String { session.withLock { $0?.user.objectId ?? "" } }

    /// The scope of local rows and the caller as ACL checks see it, from one reading of the
    /// session (a user switching in between cannot pair one user's rows with another's roles).
    var identity: (scope: String, access: AccessContext) {
        session.withLock { session in
            guard let user = session?.user else { return ("", .anonymous) }
            return (user.objectId, AccessContext(userId: user.objectId, roles: Set(user.roles)))
        }
    }

    /// Saves `newSession` (none: signed out) in the store, then makes it current.
    /// - Throws: `cache` when the store cannot save it (the current session stays).
    func replace(with newSession: StoredSession?) throws(RooftopError) {
        try changes.withLock { _ throws(RooftopError) in try save(newSession) }
    }

    /// Replaces the cached user (new effective roles); nothing when `user` is not signed in.
    /// - Throws: `cache` when the store cannot save it.
    func updateUser(_ user: UserInfo) throws(RooftopError) {
        try changes.withLock { _ throws(RooftopError) in
            guard var stored = current, stored.user.objectId == user.objectId else { return }
            stored.user = user
            try save(stored)
        }
    }

    /// Caches the effective roles a pull told for the user whose rows are `scope` (nothing when
    /// another user signed in since, or they are unchanged), so that offline ACL checks see
    /// roles gained or lost without a refresh of the user.
    /// - Throws: `cache` when the store cannot save them.
    func updateRoles(_ roles: [String], scope: String) throws(RooftopError) {
        try changes.withLock { _ throws(RooftopError) in
            guard var stored = current, stored.user.objectId == scope, Set(stored.user.roles) != Set(roles) else {
                return
            }
            stored.user.roles = roles
            try save(stored)
        }
    }

    /// Saves a session in the store, then makes it current (under ``changes``).
    private func save(_ newSession: StoredSession?) throws(RooftopError) {
        try store.saveSession(newSession)
        session.withLock { $0 = newSession }
    }
}
