import Foundation

/// The machine's TCP connections, read from `/proc/net/tcp` and `/proc/net/tcp6` (Linux only).
public enum TCPConnections {
    /// Whether connections can be listed on this system.
    public static var isAvailable: Bool { FileManager.default.isReadableFile(atPath: "/proc/net/tcp") }

    /// How many connections to `port` (as their remote port) are established or waiting to be
    /// closed by their owner: sockets a client still holds.
    public static func openConnections(toPort port: Int) -> Int {
        let remotePort = String(format: "%04X", port)
        var count = 0
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = contents(of: table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                // sl, local_address, rem_address, st: 01 = ESTABLISHED, 08 = CLOSE_WAIT.
                guard columns.count > 3, columns[2].hasSuffix(":" + remotePort) else { continue }
                if columns[3] == "01" || columns[3] == "08" { count += 1 }
            }
        }
        return count
    }

    /// A procfs file's whole text. These files report size 0 and hand out a page per read, so
    /// they must be read until the end rather than by their size.
    private static func contents(of path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return (try? handle.readToEnd()).map { String(decoding: $0, as: UTF8.self) }
    }
}
