import RooftopShared

/// The class settings one request reads, each class's read from the ``ClassDirectory`` once.
///
/// A pull page or a push names one class for hundreds of objects, and each read of the
/// directory is a hop onto its actor and back onto the request's executor (a task switch, often
/// a thread woken): once per object, those hops and the checkpoint's old base64url made a full
/// pull take 3–11% more of the server's CPU (docs/benchmarks.md). A memo serves one step of a
/// request (a pull page's feed, its access changes, a push's preparation): every object of that
/// step sees the same settings, even when they change meanwhile. It holds at most one entry per
/// class the step names, so it is bounded by what bounds the request (its page size, its
/// mutations, the objects its includes may read).
///
/// ```swift
/// var settings = ClassSettingsMemo(classes)
/// for row in rows where try await settings.permissions(of: row.className).allows(.find, for: context) { … }
/// ```
struct ClassSettingsMemo {
    private let directory: ClassDirectory
    private var known: [String: ClassSettings] = [:]

    /// A memo reading `directory`.
    init(_ directory: ClassDirectory) {
        self.directory = directory
    }

    /// A class's settings: read from the directory the first time this memo is asked.
    /// - Throws: What ``ClassDirectory/settings(of:)`` throws (nothing is kept then).
    mutating func settings(of className: String) async throws -> ClassSettings {
        if let settings = known[className] { return settings }
        let settings = try await directory.settings(of: className)
        known[className] = settings
        return settings
    }

    /// A class's permissions (``settings(of:)``).
    /// - Throws: What ``ClassDirectory/settings(of:)`` throws.
    mutating func permissions(of className: String) async throws -> ClassPermissions {
        try await settings(of: className).permissions
    }
}
