import Foundation
import RooftopShared

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Database files readable and writable by the server's user only (mode 0600), whatever the
/// process's umask: they hold password hashes, session hashes and every user's data.
///
/// SQLite creates a database's `-wal`, `-shm` and `-journal` files with the database file's
/// permissions, so a database file made 0600 before SQLite opens it keeps its companions 0600
/// too. A database from an older server (made with the umask's 0644) is tightened when opened.
///
/// ```swift
/// try PrivateDatabaseFile.prepare("rooftop-data/rooftop.sqlite")
/// let pool = try DatabasePool(path: "rooftop-data/rooftop.sqlite")
/// ```
enum PrivateDatabaseFile {
    /// The files SQLite keeps beside a database.
    static let companions = ["-wal", "-shm", "-journal"]

    /// Creates the database file at `path` with mode 0600 if it does not exist, and sets mode 0600
    /// on it and on its companions that do.
    /// - Throws: `illegalArgument` when the file cannot be created or its mode set.
    static func prepare(_ path: String) throws(RooftopError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw RooftopError(.illegalArgument, "cannot create the database file \(path): \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        for file in [path] + companions.map({ path + $0 }) where FileManager.default.fileExists(atPath: file) {
            guard chmod(file, 0o600) == 0 else {
                throw RooftopError(
                    .illegalArgument, "cannot make \(file) private (mode 0600): \(String(cString: strerror(errno)))")
            }
        }
    }
}
