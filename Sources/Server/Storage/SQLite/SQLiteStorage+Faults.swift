import GRDB

extension DatabaseError: StorageFaultReporting {
    /// SQLite's codes for a database that cannot be written or read now: a full disk
    /// (`SQLITE_FULL`), a read-only file or file system (`SQLITE_READONLY`), an I/O error
    /// (`SQLITE_IOERR`), a file that cannot be opened (`SQLITE_CANTOPEN`).
    public var storageFault: String? {
        switch resultCode {
        case .SQLITE_FULL: "the disk is full"
        case .SQLITE_READONLY: "the database is read-only"
        case .SQLITE_IOERR: "the disk failed to read or write"
        case .SQLITE_CANTOPEN: "the database file cannot be opened"
        default: nil
        }
    }
}
