import GRDB
import RooftopSQL
import RooftopShared

extension LocalStoreMigrations {
    /// v7: the compound indexes classes declare (``ClassSettings/indexes``), kept per scope and
    /// datastore (``SQLCompoundIndex``); v8: the value indexes hold only the fields they name;
    /// v9: counts per leading key of the indexes of two fields or more; v10: entries' additions
    /// to those counts made by the writer (``IndexEntryWriter``), not a trigger; v11: rows only of
    /// value-indexed fields; v12: reader sets; v13: class counts of inserted objects added by the
    /// writer; v14: the rows of fields that lead an index out of the value index.
    static func registerIndexMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v7: declared compound indexes") { db in
            // `class_indexes`: the indexes each class declares (unused fields ''), learned from
            // the server. `index_partitions`: one per index and scope and datastore holding the
            // class, made by triggers when either appears (a `class_counts` row is made with a
            // class's first object in a datastore). `index_entries`: per live object, the keys of
            // the index's fields (X'' when absent) and its `readable` flag (kept by a trigger),
            // so that a count by an index reads nothing else.
            try db.execute(sql: """
                CREATE TABLE class_indexes (
                    id INTEGER PRIMARY KEY,
                    class_name TEXT NOT NULL,
                    field1 TEXT NOT NULL,
                    field2 TEXT NOT NULL DEFAULT '',
                    field3 TEXT NOT NULL DEFAULT '',
                    field4 TEXT NOT NULL DEFAULT '',
                    UNIQUE (class_name, field1, field2, field3, field4)
                );
                CREATE TABLE index_partitions (
                    id INTEGER PRIMARY KEY,
                    class_index INTEGER NOT NULL,
                    scope TEXT NOT NULL,
                    datastore TEXT NOT NULL,
                    UNIQUE (scope, datastore, class_index)
                );
                CREATE TABLE index_entries (
                    partition INTEGER NOT NULL,
                    k1 BLOB NOT NULL,
                    k2 BLOB NOT NULL,
                    k3 BLOB NOT NULL,
                    k4 BLOB NOT NULL,
                    object_key INTEGER NOT NULL,
                    readable INTEGER NOT NULL,
                    PRIMARY KEY (partition, k1, k2, k3, k4, object_key)
                ) WITHOUT ROWID;
                CREATE INDEX index_entries_by_object ON index_entries(object_key);
                CREATE TRIGGER index_partitions_for_datastore AFTER INSERT ON class_counts BEGIN
                    INSERT INTO index_partitions (class_index, scope, datastore)
                        SELECT d.id, new.scope, new.datastore FROM class_indexes d
                        WHERE d.class_name = new.class_name AND NOT EXISTS (
                            SELECT 1 FROM index_partitions p
                            WHERE p.scope = new.scope AND p.datastore = new.datastore AND p.class_index = d.id);
                END;
                CREATE TRIGGER index_partitions_for_index AFTER INSERT ON class_indexes BEGIN
                    INSERT INTO index_partitions (class_index, scope, datastore)
                        SELECT new.id, c.scope, c.datastore FROM class_counts c
                        WHERE c.class_name = new.class_name AND NOT EXISTS (
                            SELECT 1 FROM index_partitions p
                            WHERE p.scope = c.scope AND p.datastore = c.datastore AND p.class_index = new.id);
                END;
                CREATE TRIGGER index_entries_readable AFTER UPDATE OF readable ON objects
                WHEN old.readable != new.readable BEGIN
                    UPDATE index_entries SET readable = new.readable WHERE object_key = new.key;
                END;
                """)
        }
        migrator.registerMigration("v8: value indexes of the fields declared indexes name") { db in
            // Every field's rows were in the value indexes on (field, key): at a million objects
            // each is a write into an index far larger than the cache, for every object stored.
            // A class that declares indexes now keeps only the fields they name there.
            try db.execute(sql: """
                ALTER TABLE object_fields ADD COLUMN by_value INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE object_elements ADD COLUMN by_value INTEGER NOT NULL DEFAULT 1;
                DROP INDEX object_fields_by_value;
                DROP INDEX object_elements_by_value;
                """)
            for className in try String.fetchAll(db, sql: "SELECT DISTINCT class_name FROM class_indexes") {
                try StoreTransaction.flagValueIndexed(of: className, leadingOutOfValueIndex: false, db)
            }
            // The flag is a column of the indexes too: SQLite 3.40 does not see that an index
            // whose rows all have `by_value = 1` answers that term, and would read each row of the
            // table to test it (a prefix matching half of 100,000 objects took 2.6 times as long).
            try db.execute(sql: """
                CREATE INDEX object_fields_by_value ON object_fields(field, sort_key, by_value) WHERE by_value = 1;
                CREATE INDEX object_elements_by_value ON object_elements(field, element_key, by_value) WHERE by_value = 1;
                """)
        }
        migrator.registerMigration("v9: counts per leading key of compound indexes") { db in
            // A screen's query names the value of a compound index's first field and pages by the
            // next (`category = ? order by score desc limit 50`): its page reads 50 entries, but
            // its total count read every entry of the category (7.6 ms of a query's 8.7 at a
            // million objects). Triggers keep, per partition and first key, the number of entries
            // and of readable ones, as `class_counts` does per class, for the indexes whose
            // counts a query can use (``SQLCompoundIndex/keepsKeyCounts``: two fields or more; a
            // single field's entries of one key are the count's own range). A key's row goes with
            // its last entry. A role change flips many objects' readable flags: a flip alone moves
            // one count.
            let counted = "EXISTS (SELECT 1 FROM index_partitions p JOIN class_indexes d ON d.id = p.class_index"
            try db.execute(sql: """
                CREATE TABLE index_key_counts (
                    partition INTEGER NOT NULL,
                    k1 BLOB NOT NULL,
                    live INTEGER NOT NULL,
                    readable INTEGER NOT NULL,
                    PRIMARY KEY (partition, k1)
                ) WITHOUT ROWID;
                INSERT INTO index_key_counts (partition, k1, live, readable)
                    SELECT c.partition, c.k1, count(*), sum(c.readable = 1) FROM index_entries c
                    WHERE \(counted) WHERE p.id = c.partition AND d.field2 != '')
                    GROUP BY c.partition, c.k1;
                CREATE TRIGGER index_key_counts_insert AFTER INSERT ON index_entries
                WHEN \(counted) WHERE p.id = new.partition AND d.field2 != '')
                BEGIN
                    \(keyCount(of: "new", adding: true))
                END;
                CREATE TRIGGER index_key_counts_delete AFTER DELETE ON index_entries
                WHEN \(counted) WHERE p.id = old.partition AND d.field2 != '')
                BEGIN
                    \(keyCount(of: "old", adding: false))
                END;
                CREATE TRIGGER index_key_counts_readable AFTER UPDATE OF readable ON index_entries
                WHEN old.partition = new.partition AND old.k1 = new.k1 AND old.readable != new.readable
                BEGIN
                    UPDATE index_key_counts SET readable = readable + (new.readable = 1) - (old.readable = 1)
                        WHERE partition = new.partition AND k1 = new.k1;
                END;
                CREATE TRIGGER index_key_counts_update AFTER UPDATE OF partition, k1 ON index_entries
                WHEN old.partition != new.partition OR old.k1 != new.k1
                BEGIN
                    \(keyCount(of: "old", adding: false, when: "\(counted) WHERE p.id = old.partition AND d.field2 != '')"))
                    \(keyCount(of: "new", adding: true, when: "\(counted) WHERE p.id = new.partition AND d.field2 != '')"))
                END;
                """)
        }
        migrator.registerMigration("v10: counts per leading key added by the writer") { db in
            // The insert trigger tested every entry's index (a join) and wrote its key's count,
            // once per object stored: an initial sync's page of 500 objects in a few categories
            // wrote the same rows 500 times. The writer now binds entries itself and adds them to
            // the counts (summed per key over a pulled page, ``IndexEntryWriter``), and the SQL
            // that makes entries from stored rows adds its own (``StoreTransaction/indexEntries``).
            // Taking entries away, and a readable flag's flip, stay triggers' work.
            try db.execute(sql: "DROP TRIGGER index_key_counts_insert")
        }
        migrator.registerMigration("v11: rows only of value-indexed fields") { db in
            // A class that declares indexes kept a row of every field of every object (and of
            // every list element) outside the value indexes, only for conditions on those fields
            // to look up each object's own row: most of what an initial sync wrote. Conditions
            // and orders on those fields now read the object's document (`rooftop_field`), and
            // only the fields its declared indexes name keep rows.
            try db.execute(sql: """
                DELETE FROM object_fields WHERE by_value = 0;
                DELETE FROM object_elements WHERE by_value = 0;
                """)
        }
        migrator.registerMigration("v12: reader sets") { db in
            // Who may read an object was an `object_readers` row per object and principal (and
            // one in the index by principal): eight of an initial sync's rows per object with
            // four readers, where a page's objects share a few ACLs. Each distinct set of readers
            // is now stored once (`reader_sets`, its members in `reader_set_members`), and an
            // object's row names its set (``SQLIndexLayout/Readers/sets``).
            try db.execute(sql: """
                CREATE TABLE reader_sets (
                    id INTEGER PRIMARY KEY,
                    principals TEXT NOT NULL UNIQUE
                );
                CREATE TABLE reader_set_members (
                    principal TEXT NOT NULL,
                    reader_set INTEGER NOT NULL,
                    PRIMARY KEY (principal, reader_set)
                ) WITHOUT ROWID;
                CREATE INDEX reader_set_members_by_set ON reader_set_members(reader_set);
                ALTER TABLE objects ADD COLUMN readers INTEGER;
                """)
            try migrateReaderSets(db)
            try db.execute(sql: """
                DROP TABLE object_readers;
                CREATE INDEX objects_by_readers ON objects(readers);
                """)
        }
        migrator.registerMigration("v13: class counts added by the writer") { db in
            // The insert trigger wrote an object's class count once per object (two statements
            // and a statement journal per insert, a tenth of an initial sync's writer): the
            // writer now sums a transaction's inserts per class and writes each class's row once
            // (``StoreTransaction/finish()``). Updates and deletes stay triggers' work.
            try db.execute(sql: "DROP TRIGGER class_counts_insert")
        }
        migrator.registerMigration("v14: rows of the fields that lead an index out of the value index") { db in
            // A field that leads a declared index has its key first in that index's entries,
            // where conditions on it now look (``SQLQueryCompiler/entryKeyed``): its
            // `object_fields` rows stay (for each object's own tests and orders) but leave the
            // value index, whose writes at random places were a fifth of an initial sync's.
            try db.execute(
                sql: """
                    UPDATE object_fields SET by_value = 0
                    WHERE by_value = 1 AND EXISTS (
                        SELECT 1 FROM objects o JOIN class_indexes d ON d.class_name = o.class_name
                        WHERE o.key = object_fields.object_key AND d.field1 = object_fields.field)
                    """)
        }
    }

    /// v12: gives every live object the reader set of its `object_readers` rows. A live object
    /// without rows (no principal may read it, or a store indexed before the rows were kept) gets
    /// the set of its local view's ACL, decoded.
    ///
    /// Its statements are its own, written against the tables as v12 leaves them, so that a later
    /// change to how the store writes reader sets or reads object rows does not change what this
    /// does; it shares only the reader-set text form (``SQLIndexRows/readerSetText(_:)``), the
    /// rule of who reads an object (``SQLIndexRows/readers(of:)``) and the document's decoding.
    private static func migrateReaderSets(_ db: Database) throws {
        let update = try db.makeStatement(sql: "UPDATE objects SET readers = ? WHERE key = ?")
        let find = try db.makeStatement(sql: "SELECT id FROM reader_sets WHERE principals = ?")
        let insert = try db.makeStatement(sql: "INSERT INTO reader_sets (principals) VALUES (?)")
        let member = try db.makeStatement(sql: "INSERT INTO reader_set_members (reader_set, principal) VALUES (?, ?)")
        var sets: [Set<String>: Int64] = [:]
        func setID(_ readers: Set<String>) throws -> Int64 {
            if let known = sets[readers] { return known }
            let text = SQLIndexRows.readerSetText(readers)
            let id: Int64
            if let stored = try Int64.fetchOne(find, arguments: [text]) {
                id = stored
            } else {
                try insert.execute(arguments: [text])
                id = db.lastInsertedRowID
                for principal in readers { try member.execute(arguments: [id, principal]) }
            }
            sets[readers] = id
            return id
        }
        var current: (key: Int64, readers: Set<String>)?
        func flush() throws {
            guard let current else { return }
            try update.execute(arguments: [try setID(current.readers), current.key])
        }
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT r.object_key, r.principal FROM object_readers r JOIN objects o ON o.key = r.object_key
                WHERE o.deleted = 0 ORDER BY r.object_key
                """)
        while let row = try rows.next() {
            let key: Int64 = row[0]
            if current?.key != key {
                try flush()
                current = (key, [])
            }
            current?.readers.insert(row[1])
        }
        try flush()
        // The local view: `local`, or the server state when v6's flag says they are one.
        let unread = try Row.fetchCursor(
            db,
            sql: """
                SELECT key, CASE WHEN local_is_server = 1 THEN server ELSE local END FROM objects
                WHERE deleted = 0 AND readers IS NULL
                """)
        while let row = try unread.next() {
            guard let text = row[1] as String? else { continue }
            let local = try DocumentCoding.decode(ObjectSnapshot.self, from: text)
            try update.execute(arguments: [try setID(SQLIndexRows.readers(of: local.acl)), row[0] as Int64])
        }
    }

    /// The statements of an `index_key_counts` trigger that add (`adding`) the entry `row` (`new`
    /// or `old`) to its key's counts, or take it away and then drop the key's row if that was its
    /// last entry; the count changes only `when` the condition holds, when given.
    private static func keyCount(of row: String, adding: Bool, when condition: String? = nil) -> String {
        let only = condition.map { " AND " + $0 } ?? ""
        let matches = "partition = \(row).partition AND k1 = \(row).k1"
        if adding {
            return """
                INSERT INTO index_key_counts (partition, k1, live, readable)
                    SELECT \(row).partition, \(row).k1, 1, \(row).readable = 1 WHERE 1\(only)
                    ON CONFLICT (partition, k1) DO UPDATE SET live = live + 1, readable = readable + excluded.readable;
                """
        }
        return """
            UPDATE index_key_counts SET live = live - 1, readable = readable - (\(row).readable = 1)
                WHERE \(matches)\(only);
            DELETE FROM index_key_counts WHERE \(matches) AND live = 0;
            """
    }
}
