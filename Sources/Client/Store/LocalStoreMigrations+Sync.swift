import GRDB

extension LocalStoreMigrations {
    /// The sync engine's tables, registered after the core schema.
    ///
    /// `sync_filters` keeps, beside each datastore's pull checkpoint, the sync scope that
    /// checkpoint covers (`SyncScope` JSON), so that a later pull with a wider or narrower scope
    /// knows what to fetch or drop, also after a restart.
    static func registerSyncMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v2: sync filters") { db in
            try db.execute(sql: """
                CREATE TABLE sync_filters (
                    scope TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    filter TEXT NOT NULL,
                    PRIMARY KEY (scope, datastore)
                );
                """)
        }
    }
}
