import RooftopShared

extension RooftopClient {
    /// The offline queue: statuses, events, refused changes, waiting until everything is sent.
    public var outbox: Outbox { Outbox(core: core) }

    /// Push, pull, progress, merge decisions and continuous sync.
    public var sync: SyncEngine { core.syncEngine }

    /// The datastores: list, create, open, delete, uncache.
    public var datastores: DatastoreManager { DatastoreManager(core: core) }
}

extension ClientCore {
    /// Starts the offline queue's engine: it sends what is queued (and what a crash left `sent`)
    /// as soon as a user is signed in.
    func startSync() {
        services.start()
    }
}
