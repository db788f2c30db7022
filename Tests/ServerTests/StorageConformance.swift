import Foundation
import RooftopShared
import Testing

@testable import RooftopServer

/// The storage conformance suite: test bodies written against `any Storage` only, each taking a
/// fixture factory, so that every backend runs the same checks (``StorageSQLiteTests`` runs them
/// on SQLite; a PostgreSQL suite would pass its own factory).
///
/// Each body opens a fresh fixture with ``withStorage(_:_:)`` and uses `#expect`/`#require`, so
/// failures are recorded against the backend's test that called it.
enum StorageConformance {
    /// A timestamp `milliseconds` after an arbitrary fixed epoch, for readable tests.
    static func time(_ milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: 1_700_000_000_000 + milliseconds)
    }

    /// A user record with a fixed creation time.
    static func user(_ id: String, _ username: String, email: String? = nil) -> UserRecord {
        UserRecord(id: id, username: username, email: email, passwordHash: "$2b$04$hash-of-\(id)", createdAt: time(0))
    }

    /// An object of class `T` (version 1 unless given) with fields, an ACL and timestamps.
    static func object(
        _ objectId: String, in datastore: DatastoreID = .default, className: String = "T", version: Int64 = 1,
        fields: [String: Value] = [:], acl: ACL? = nil
    ) -> ObjectSnapshot {
        ObjectSnapshot(
            className: className, objectId: objectId, datastore: datastore, fields: fields, acl: acl,
            createdAt: time(1), updatedAt: time(version), version: version,
            fieldVersions: fields.mapValues { _ in version })
    }

    /// An ACL letting each of `readers` read (and nobody write).
    static func readable(by readers: Principal...) -> ACL {
        ACL(Dictionary(uniqueKeysWithValues: readers.map { ($0, ACL.Access(read: true)) }))
    }

    /// The next version of `snapshot` with some fields changed.
    static func updated(_ snapshot: ObjectSnapshot, _ changes: [String: Value?], acl: ACL?? = nil) -> ObjectSnapshot {
        var next = snapshot
        for (field, value) in changes { next.fields[field] = value }
        next.version += 1
        next.updatedAt = time(next.version)
        next.fieldVersions = next.fields.mapValues { _ in next.version }
        if let acl { next.acl = acl }
        return next
    }

    /// Runs one write of `T/objectId` whose `decide` records its context and returns
    /// `decision(context)`.
    static func write(
        _ storage: any Storage, datastoreKey: Int64, objectId: String, className: String = "T", base: Int64?,
        mutation: (scope: String, id: MutationID)? = nil, recorder: Recorder<ObjectWriteContext>? = nil,
        _ decision: @escaping @Sendable (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) async throws -> ObjectWriteOutcome {
        let request = ObjectWriteRequest(
            datastoreKey: datastoreKey, className: className, objectId: objectId, baseVersion: base, mutation: mutation)
        return try await storage.writeObject(request) { context throws(RooftopError) in
            recorder?.record(context)
            return try decision(context)
        }
    }

    /// Whether `operation` throws a ``RooftopError`` with `code`.
    static func throwsCode(_ code: RooftopError.Code, _ operation: () async throws -> Void) async -> Bool {
        do {
            try await operation()
            return false
        } catch let error as RooftopError {
            return error.code == code
        } catch {
            return false
        }
    }
}

/// Records what `@Sendable` closures saw, such as the contexts passed to a write's `decide`
/// (which may run on a storage's own thread, outside the test's task, so it cannot `#expect`).
final class Recorder<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []

    /// Records one element.
    func record(_ element: Element) {
        lock.lock()
        elements.append(element)
        lock.unlock()
    }

    /// Everything recorded, in order.
    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return elements
    }

    /// How many elements were recorded.
    var count: Int { all.count }

    /// The last element recorded.
    var last: Element? { all.last }
}

/// Counts calls.
typealias CallCounter = Recorder<Void>

extension Recorder where Element == Void {
    /// Counts one call.
    func increment() { record(()) }
}
