import Foundation
import RooftopShared

/// Opens the storage a URL names.
enum StorageFactory {
    /// `sqlite:<path>` (or `sqlite://<path>`) opens the embedded SQLite storage.
    /// - Throws: `illegalArgument` for an unsupported URL.
    static func open(url: String) throws -> any Storage {
        if url.hasPrefix("sqlite:") {
            var path = String(url.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty else { throw RooftopError(.illegalArgument, "the SQLite storage URL needs a path") }
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return try SQLiteStorage(path: path)
        }
        throw RooftopError(.illegalArgument, "unsupported storage URL '\(url)': use sqlite:<path>")
    }
}
