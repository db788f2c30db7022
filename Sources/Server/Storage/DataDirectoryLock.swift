import Foundation
import RooftopShared

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a data directory (`<dir>/rooftop.lock`, held with `flock`), taken by a
/// running server and by a restore, so that two servers never share one embedded database and a
/// restore never replaces a database in use. The kernel drops the lock when the process ends,
/// however it ends (a server killed with SIGKILL leaves no stale lock).
///
/// ```swift
/// let lock = try DataDirectoryLock(directory: "rooftop-data")
/// defer { lock.release() }
/// ```
public final class DataDirectoryLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock, creating the directory and lock file when needed.
    /// - Throws: `alreadyOpen` when another process holds it; `illegalArgument` when the lock
    ///   file cannot be created (a missing or read-only directory).
    public init(directory: String) throws(RooftopError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw RooftopError(.illegalArgument, "cannot create the data directory \(directory): \(error)", cause: error)
        }
        let path = (directory as NSString).appendingPathComponent("rooftop.lock")
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw RooftopError(
                .illegalArgument, "cannot create \(path): \(String(cString: strerror(errno))) (is the data directory writable?)")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw RooftopError(.alreadyOpen, "another rooftop-server process is using the data directory \(directory)")
        }
        self.descriptor = descriptor
    }

    /// Releases the lock (also released when the process exits).
    public func release() {
        close(descriptor)
    }
}
