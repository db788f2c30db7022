import Foundation

/// Where an export goes: a new file, or standard output; one JSON document per line.
final class OutputFile {
    private let handle: FileHandle
    private let isStandardOutput: Bool
    private let encoder: JSONEncoder
    private var buffer = Data()

    /// Opens `path` for writing (created, or truncated), or standard output for `nil`.
    /// - Throws: The file system's error.
    init(path: String?) throws {
        if let path {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            isStandardOutput = false
        } else {
            handle = FileHandle.standardOutput
            isStandardOutput = true
        }
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// Writes a value as one line of JSON.
    /// - Throws: What encoding or writing throws.
    func writeLine(_ value: some Encodable) throws {
        buffer.append(try encoder.encode(value))
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 20 { try flush() }
    }

    /// Writes what is buffered and, for a file, makes it durable and closes it.
    /// - Throws: The file system's error.
    func close() throws {
        try flush()
        if !isStandardOutput {
            try handle.synchronize()
            try handle.close()
        }
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Lines of a file, or of standard input, read in chunks.
final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()
    private var atEnd = false
    /// Bytes consumed so far.
    private(set) var bytesRead = 0
    /// The file's size (`nil` for standard input).
    let totalBytes: Int?

    /// The longest line accepted: an object's JSON is far smaller (records are at most a few MiB).
    static let maxLineBytes = 64 << 20

    /// Opens `path`, or standard input for `nil`.
    /// - Throws: The file system's error.
    init(path: String?) throws {
        if let path {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber
            totalBytes = size?.intValue
        } else {
            handle = FileHandle.standardInput
            totalBytes = nil
        }
    }

    /// The next line without its newline, or `nil` at the end.
    /// - Throws: The file system's error; `CocoaError` for invalid UTF-8 or a line too long.
    func nextLine() throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                bytesRead += line.count + 1
                return try text(line)
            }
            if atEnd {
                guard !buffer.isEmpty else { return nil }
                let line = buffer
                buffer.removeAll()
                bytesRead += line.count
                return try text(line)
            }
            guard buffer.count <= Self.maxLineBytes else {
                throw CocoaError(.fileReadTooLarge, userInfo: [NSLocalizedDescriptionKey: "a line is longer than 64 MiB"])
            }
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(chunk) }
        }
    }

    private func text(_ bytes: Data) throws -> String {
        guard let text = String(data: bytes, encoding: .utf8) else {
            throw CocoaError(.fileReadInapplicableStringEncoding, userInfo: [NSLocalizedDescriptionKey: "a line is not UTF-8"])
        }
        return text
    }
}

/// A progress bar on standard error, drawn only when standard error is a terminal.
struct ProgressBar {
    let label: String
    let enabled: Bool

    /// A bar for `label`; drawn when standard error is a terminal and `enabled` (default true).
    init(label: String, enabled: Bool = true) {
        self.label = label
        self.enabled = enabled && isatty(STDERR_FILENO) == 1
    }

    /// Draws `done` of `total` (a count when `total` is unknown).
    func show(done: Int, total: Int?, count: Int? = nil) {
        guard enabled else { return }
        let counted = count.map { " \($0) objects" } ?? ""
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(Int(fraction * 100))%\(counted)   ".utf8))
        } else {
            FileHandle.standardError.write(Data("\r\(label) \(done)\(counted)   ".utf8))
        }
    }

    /// Ends the bar with a summary line (always printed, on standard error).
    func finish(_ summary: String) {
        FileHandle.standardError.write(Data(((enabled ? "\r" : "") + summary + "                    \n").utf8))
    }
}
