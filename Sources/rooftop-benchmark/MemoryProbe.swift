import Foundation

/// Resident memory of a process, read from `/proc/<pid>/status` (Linux only; elsewhere every
/// reading is `nil` and the report says "n/a").
///
/// `VmRSS` is the current resident set; `VmHWM` its peak ("high water mark") since the process
/// started, which the kernel keeps exactly, so a short spike between two readings is not missed.
struct MemoryReading: Sendable, Codable, Equatable {
    /// Current resident set size, in bytes.
    var residentBytes: Int
    /// Peak resident set size since the process started, in bytes.
    var peakBytes: Int
    /// The part of ``residentBytes`` that is pages of mapped files (`RssFile`): the executable
    /// and its libraries, and the server's database, which SQLite reads through a memory map.
    /// Those pages are the kernel's page cache, shared and dropped under memory pressure like
    /// any cached file page; `nil` when not reported.
    var fileBytes: Int? = nil
}

/// Reads ``MemoryReading``s.
enum MemoryProbe {
    /// The reading of this process.
    static func current() -> MemoryReading? {
        read(path: "/proc/self/status")
    }

    /// The reading of another process (the server in `--server-binary` mode), or `nil` when it
    /// is gone or `/proc` is missing.
    static func process(_ pid: Int32) -> MemoryReading? {
        read(path: "/proc/\(pid)/status")
    }

    private static func read(path: String) -> MemoryReading? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var resident: Int?
        var peak: Int?
        var files: Int?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { resident = kilobytes(line) }
            if line.hasPrefix("VmHWM:") { peak = kilobytes(line) }
            if line.hasPrefix("RssFile:") { files = kilobytes(line) }
        }
        guard let resident, let peak else { return nil }
        return MemoryReading(residentBytes: resident * 1024, peakBytes: peak * 1024, fileBytes: files.map { $0 * 1024 })
    }

    /// `VmRSS:     12345 kB` → 12345.
    private static func kilobytes(_ line: Substring) -> Int? {
        line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }
}
