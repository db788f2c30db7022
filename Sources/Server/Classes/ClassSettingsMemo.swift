import RooftopShared

/// The class settings one request reads, each class's read from the ``ClassDirectory`` once.
///
/// A pull page or a push names one class for hundreds of objects, and each read of the
/// directory is a hop onto its actor and back onto the request's executor (a task switch, often
/// a thread woken): once per object, a full pull's server time was 5–11% higher
/// (docs/benchmarks.md). Reading a class once per request also gives every object of the request
/// the same settings, even when they change meanwhile. It holds at most one entry per class the
/// request names, so it is bounded by what bounds the request (its page size, its mutations,
/// the objects its includes may read).
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
