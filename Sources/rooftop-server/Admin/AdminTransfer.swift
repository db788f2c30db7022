import ArgumentParser
import Foundation
import NIOHTTP1
import RooftopShared

/// The export file's first line: what it holds.
struct ExportHeader: Codable {
    /// The format's version.
    var rooftopExport: Int
    /// The datastore exported.
    var datastore: DatastoreID
    /// When the export began, in milliseconds since the epoch.
    var exportedAt: Int64
}

/// An export line for an object deleted after an earlier line of the same export wrote it:
/// `{"tombstone": {"className": ..., "objectId": ...}}`. Import deletes the object, so that an
/// object deleted during the export does not come back.
struct ExportTombstone: Codable {
    /// The deleted object.
    struct Target: Codable {
        var className: String
        var objectId: String
    }

    var tombstone: Target
}

/// `rooftop-server admin export`: a datastore's objects as NDJSON.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a datastore's objects as NDJSON (one object per line), with a progress bar on a terminal.",
        discussion: """
            The first line is a header ({"rooftopExport": 1, "datastore": ..., "exportedAt": ...}); \
            each other line is an object in the portable JSON form (fields with typed values, \
            doubles bit-exact, ACL, version, createdAt, updatedAt). The objects come from the \
            datastore's change feed, read with the admin key: the app datastore :app and shareable \
            datastores (.ID). An object changed during the export may appear twice; its later line \
            is the newer state, and import applies lines in order. An object deleted during the \
            export after its line was written is followed by a tombstone line \
            ({"tombstone": {"className": ..., "objectId": ...}}), which import applies as a delete.
            """)

    @OptionGroup var connection: AdminConnection

    @Option(help: "The datastore to export (:app, or a shareable .ID).")
    var datastore: String = ":app"

    @Option(help: "The file to write (default standard output).")
    var out: String?

    func run() async throws {
        let id = try DatastoreID.parse(datastore)
        let api = try connection.open()
        do {
            let output = try OutputFile(path: out)
            let progress = ProgressBar(label: "export", enabled: out != nil)
            try output.writeLine(
                ExportHeader(rooftopExport: 1, datastore: id, exportedAt: Timestamp.now.millisecondsSinceEpoch))
            var since: Checkpoint?
            var written = 0
            // The objects this export has written: a later tombstone of one of them is written
            // too (the others were deleted before the export saw them).
            var exported: Set<Pointer> = []
            repeat {
                let page = try await api.pull(PullRequest(datastore: id, since: since))
                for change in page.changes {
                    switch change {
                    case .upsert(let object):
                        try output.writeLine(object)
                        exported.insert(object.pointer)
                        written += 1
                    case .tombstone(let className, let objectId, _), .removal(let className, let objectId):
                        let pointer = Pointer(className: className, objectId: objectId)
                        if exported.remove(pointer) != nil {
                            try output.writeLine(
                                ExportTombstone(tombstone: .init(className: className, objectId: objectId)))
                        }
                    }
                }
                since = page.checkpoint
                progress.show(done: written, total: page.hasMore ? written + (page.remaining ?? 0) : written)
                if !page.hasMore { break }
            } while true
            try output.close()
            progress.finish("exported \(written) objects from \(id)")
            try await api.shutdown()
        } catch {
            try await api.shutdown()
            throw error
        }
    }
}

/// `rooftop-server admin import`: NDJSON objects into a datastore.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the objects of an NDJSON export into a datastore, with a progress bar on a terminal.",
        discussion: """
            Each object is pushed with its ID, fields and ACL (its version and dates are the \
            server's own); an object that exists already gets the fields set. Objects go in \
            batches, each pushed once with fresh mutation IDs: running the import again sets the \
            same values again. A tombstone line deletes its object (one that is missing already \
            is fine). A refused object stops the import with its error. --batch may not exceed \
            the server's maxMutationsPerPush (500 by default; GET /v1/info).
            """)

    @OptionGroup var connection: AdminConnection

    @Option(help: "The datastore to write to (:app, or a shareable .ID); default the one the file names.")
    var datastore: String?

    @Option(name: .customLong("in"), help: "The file to read (default standard input).")
    var input: String?

    @Option(help: "Objects per push.")
    var batch: Int = 200

    func run() async throws {
        guard (1...1000).contains(batch) else { throw ValidationError("--batch must be within 1...1000") }
        let reader = try LineReader(path: input)
        guard let headerLine = try reader.nextLine() else { throw ValidationError("the file is empty") }
        let header: ExportHeader
        do {
            header = try JSONDecoder().decode(ExportHeader.self, from: Data(headerLine.utf8))
        } catch {
            throw ValidationError("the first line is not a Rooftop export header: \(error)")
        }
        guard header.rooftopExport == 1 else { throw ValidationError("export format \(header.rooftopExport) is unknown") }
        let target = try datastore.map(DatastoreID.parse) ?? header.datastore
        let api = try connection.open()
        do {
            let info = try await api.call(API.getServerInfo)
            guard batch <= info.limits.maxMutationsPerPush else {
                throw ValidationError(
                    "--batch \(batch) is more than the server takes in one push (maxMutationsPerPush \(info.limits.maxMutationsPerPush))")
            }
            let progress = ProgressBar(label: "import", enabled: input != nil)
            var pending: [Mutation] = []
            var imported = 0
            var line = 1
            func flush() async throws {
                guard !pending.isEmpty else { return }
                let response = try await api.call(API.push, body: PushRequest(mutations: pending, compact: true))
                for (mutation, result) in zip(pending, response.results) {
                    // Deleting what is missing already leaves it missing, as the export meant.
                    if case .rejected(_, let error) = result, !(mutation.change == .delete && error.code == .notFound) {
                        throw RooftopError(
                            error.code, "\(mutation.className)/\(mutation.objectId) was refused: \(error.message)",
                            field: error.field)
                    }
                }
                imported += pending.count
                pending.removeAll(keepingCapacity: true)
                progress.show(done: reader.bytesRead, total: reader.totalBytes, count: imported)
            }
            while let text = try reader.nextLine() {
                line += 1
                guard !text.isEmpty else { continue }
                if let deleted = try? JSONDecoder().decode(ExportTombstone.self, from: Data(text.utf8)) {
                    pending.append(
                        Mutation(
                            datastore: target, className: deleted.tombstone.className,
                            objectId: deleted.tombstone.objectId, change: .delete))
                    if pending.count == batch { try await flush() }
                    continue
                }
                let object: ObjectSnapshot
                do {
                    object = try JSONDecoder().decode(ObjectSnapshot.self, from: Data(text.utf8))
                } catch {
                    throw ValidationError("line \(line) is not an object: \(error)")
                }
                // Checked here, so that the refusal names its line and object (the server refuses
                // the whole push for a bad name).
                for name in object.fields.keys {
                    do {
                        try FieldUpdate.validateField(name)
                    } catch {
                        throw ValidationError("line \(line): \(object.className)/\(object.objectId) was refused: \(error.message)")
                    }
                }
                let updates = object.fields.sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
                pending.append(
                    Mutation(
                        datastore: target, className: object.className, objectId: object.objectId,
                        change: .update(updates, acl: object.acl)))
                if pending.count == batch { try await flush() }
            }
            try await flush()
            progress.finish("imported \(imported) objects into \(target)")
            try await api.shutdown()
        } catch {
            try await api.shutdown()
            throw error
        }
    }
}

/// `rooftop-server admin tail`: follows a datastore's change feed.
struct Tail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a datastore's changes as they commit, one JSON line each.",
        discussion: """
            Each line is {"change": "upsert" | "tombstone" | "removal", "className": ..., \
            "objectId": ..., "version": ..., "object": ...}. Without --from-start only changes after \
            the command starts are printed. The feed is polled every --interval seconds. Once the \
            existing feed is skipped (or, with --from-start, before it is printed), one line on \
            standard error says where the tail starts: "following :app from now on (skipped 42 \
            changes)".
            """)

    @OptionGroup var connection: AdminConnection

    @Option(help: "The datastore (:app, or a shareable .ID).")
    var datastore: String = ":app"

    @Flag(help: "Print the datastore's whole feed first.")
    var fromStart = false

    @Option(help: "Stop after this many changes (default: follow until interrupted).")
    var count: Int?

    @Option(help: "Seconds between polls.")
    var interval: Double = 1

    func run() async throws {
        let id = try DatastoreID.parse(datastore)
        guard interval >= 0.05, interval <= 3600 else { throw ValidationError("--interval must be within 0.05...3600") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        let api = try connection.open()
        do {
            var since: Checkpoint?
            if fromStart {
                Self.say("following \(id) from the start")
            } else {
                // Skip the existing feed: page through it without printing.
                var skipped = 0
                repeat {
                    let page = try await api.pull(PullRequest(datastore: id, since: since))
                    since = page.checkpoint
                    skipped += page.changes.count
                    if !page.hasMore { break }
                } while true
                Self.say("following \(id) from now on (skipped \(skipped) change\(skipped == 1 ? "" : "s"))")
            }
            var printed = 0
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            while count.map({ printed < $0 }) ?? true {
                let page = try await api.pull(PullRequest(datastore: id, since: since))
                since = page.checkpoint
                for change in page.changes where count.map({ printed < $0 }) ?? true {
                    // Unbuffered: each line reaches a pipe as its change is seen.
                    FileHandle.standardOutput.write(try encoder.encode(TailLine(change)) + Data("\n".utf8))
                    printed += 1
                }
                if !page.hasMore, count.map({ printed < $0 }) ?? true {
                    try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
                }
            }
            try await api.shutdown()
        } catch {
            try await api.shutdown()
            throw error
        }
    }
}

extension Tail {
    /// A line for the person watching, on standard error (standard output is the changes alone).
    static func say(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// One printed change.
struct TailLine: Encodable {
    var change: String
    var className: String
    var objectId: String
    var version: Int64?
    var object: ObjectSnapshot?

    init(_ change: PullChange) {
        className = change.className
        objectId = change.objectId
        switch change {
        case .upsert(let object):
            self.change = "upsert"
            version = object.version
            self.object = object
        case .tombstone(_, _, let version):
            self.change = "tombstone"
            self.version = version
        case .removal:
            self.change = "removal"
        }
    }
}

extension DatastoreID {
    /// A datastore ID from the command line.
    /// - Throws: `ValidationError` for an invalid one.
    static func parse(_ text: String) throws -> DatastoreID {
        do {
            return try DatastoreID(text)
        } catch {
            throw ValidationError("'\(text)' is not a datastore ID: \(error.message)")
        }
    }
}
