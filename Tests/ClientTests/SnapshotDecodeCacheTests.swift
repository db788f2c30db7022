import Foundation
import RooftopShared
import Testing

@testable import Rooftop

/// The process-wide cache of decoded stored objects, at ten times its budget: it stays within its
/// budget, keeps what was read last, and a pass over more distinct objects than it holds costs
/// the same per object as a small one (the old cache dropped a quarter of its keys in bucket
/// order on every overflow: one pass of 100,000 distinct texts took 16 s).
@Suite("Client: the decoded-object cache at ten times its budget", .serialized)
struct SnapshotDecodeCacheTests {
    /// `count` distinct stored texts of about 500 bytes.
    static func texts(_ count: Int, tag: String) throws -> [String] {
        let filler = String(repeating: "x", count: 420)
        return try (0..<count).map { index in
            try ObjectSnapshot(
                className: "T", objectId: "\(tag)\(index)", datastore: .app,
                fields: ["n": .int(Int64(index)), "text": .string(filler)], version: 1
            ).encodedDocument()
        }
    }

    @Test("ten times the budget of distinct objects: within budget throughout, the last ones still cached")
    func tenTimesTheBudget() throws {
        let size = try Self.texts(1, tag: "probe")[0].utf8.count
        let count = 10 * SnapshotDecodeCache.budget / size
        let texts = try Self.texts(count, tag: "a")
        let clock = ContinuousClock()
        let started = clock.now
        var largest = 0
        for (index, text) in texts.enumerated() {
            let snapshot = try SnapshotDecodeCache.snapshot(from: text)
            #expect(snapshot.fields["n"] == .int(Int64(index)))
            if index % 1000 == 0 { largest = max(largest, SnapshotDecodeCache.bytes) }
        }
        let elapsed = clock.now - started
        print("SnapshotDecodeCache: \(count) distinct texts of \(size) bytes (10× the \(SnapshotDecodeCache.budget >> 20) MB budget) in \(elapsed)")
        #expect(largest <= SnapshotDecodeCache.budget)
        #expect(SnapshotDecodeCache.bytes <= SnapshotDecodeCache.budget)
        // The most recent objects are served from the cache: the same instance comes back.
        for text in texts.suffix(100) {
            #expect(SnapshotDecodeCache.contains(text), "a recently read object is still cached")
        }
        #expect(!SnapshotDecodeCache.contains(texts[0]), "the first of ten budgets' worth is gone")
    }

    @Test("an object read again while cached is kept across the next overflow")
    func hitsSurvive() throws {
        let hot = try Self.texts(10, tag: "hot")
        for text in hot { _ = try SnapshotDecodeCache.snapshot(from: text) }
        let size = hot[0].utf8.count
        let cold = try Self.texts(3 * SnapshotDecodeCache.budget / size, tag: "cold")
        for (index, text) in cold.enumerated() {
            _ = try SnapshotDecodeCache.snapshot(from: text)
            // Read the hot set now and then, as a screen that stays open would.
            if index % 1000 == 0 { for text in hot { _ = try SnapshotDecodeCache.snapshot(from: text) } }
        }
        for text in hot { #expect(SnapshotDecodeCache.contains(text)) }
    }

    @Test("texts are told apart by their bytes: a canonically equivalent text is its own entry, decoded from its own bytes")
    func bytesNotCharacters() throws {
        // "é" as one scalar and as "e" with a combining accent: equal as Swift strings.
        // One encoding, its name's bytes replaced: two encodings of equal dictionaries may list
        // their fields in different orders (each dictionary has its own seed).
        let composed = try ObjectSnapshot(
            className: "T", objectId: "accent", datastore: .app,
            fields: ["name": .string("caf\u{E9}"), "text": .string(String(repeating: "é", count: 300))], version: 1
        ).encodedDocument()
        let decomposed = composed.replacingOccurrences(of: "\"caf\u{E9}\"", with: "\"cafe\u{301}\"")
        #expect(composed == decomposed, "the two texts are canonically equivalent")
        #expect(!composed.utf8.elementsEqual(decomposed.utf8), "and differ in bytes")
        let first = try SnapshotDecodeCache.snapshot(from: composed)
        #expect(SnapshotDecodeCache.contains(composed))
        #expect(!SnapshotDecodeCache.contains(decomposed), "a text of other bytes is not the cached one")
        let second = try SnapshotDecodeCache.snapshot(from: decomposed)
        #expect(SnapshotDecodeCache.contains(decomposed))
        guard case .string(let composedName)? = first.fields["name"], case .string(let decomposedName)? = second.fields["name"] else {
            Issue.record("the names were not decoded as strings")
            return
        }
        #expect(Array(composedName.unicodeScalars) == ["c", "a", "f", "\u{E9}"])
        #expect(Array(decomposedName.unicodeScalars) == ["c", "a", "f", "e", "\u{301}"])
    }
}
