import RooftopShared
import Testing

@testable import RooftopServer
import RooftopTestSupport

/// The differential test of a backend's rows of declared fields (``RowFields``), the same on
/// both: random declarations, a data set written, then new declarations rebuilt batch by batch,
/// with random queries compared with the evaluator before, between and after the batches, and
/// every object's rows checked exact once a rebuild has ended.
struct RowFieldsDifferential<Backend: Storage & RowRebuilding> {
    let storage: Backend
    /// Saves a class's settings without starting the rebuild (the test runs its batches).
    var declareWithoutRebuild: (ClassSettings) async throws -> Void
    /// Checks that every object's rows are those its class keeps (no rebuild under way).
    var expectExactRows: (String) async throws -> Void
    /// Checks what the backend must hold whatever the rebuild's progress, before each round of
    /// queries (nothing by default).
    var expectSound: (String) async throws -> Void = { _ in }

    /// Runs the test with `seed`.
    func run(seed: UInt64) async throws {
        var rng = SeededGenerator(seed: seed)
        for className in DifferentialValues.classes {
            try await storage.saveClassSettings(ClassSettings(className: className, indexes: Self.randomIndexes(&rng)))
        }
        let dataset = try await DifferentialDataset.write(into: storage, using: &rng)
        await storage.rowRebuildFinished()
        try await expectExactRows("seed \(seed), declared first")
        try await queries(30, dataset, &rng, "seed \(seed), declared first")

        // New declarations, saved without starting the rebuild: its batches are run here, one at
        // a time, with queries between them.
        for className in DifferentialValues.classes {
            try await declareWithoutRebuild(ClassSettings(className: className, indexes: Self.randomIndexes(&rng)))
        }
        var batches = 0
        repeat {
            batches += 1
            try await queries(10, dataset, &rng, "seed \(seed), rebuilding, batch \(batches)")
        } while try await storage.rebuildRowsBatch(skipping: [])
        try await expectExactRows("seed \(seed), declared again")
        try await queries(30, dataset, &rng, "seed \(seed), declared again")
    }

    /// Runs `count` random queries under random readers, each compared with the evaluator.
    func queries(_ count: Int, _ dataset: DifferentialDataset, _ rng: inout SeededGenerator, _ label: String) async throws {
        try await expectSound(label)
        var mismatches = 0
        for index in 0..<count where mismatches < 3 {
            let query = DifferentialQueries.query(&rng)
            let readers = rng.pick(DifferentialDataset.readerSets)
            let outcome = try await DifferentialCheck.compare(query, readers: readers, dataset: dataset, storage: storage)
            if let report = outcome.mismatch {
                mismatches += 1
                Issue.record("\(label), query #\(index): \(report)")
            }
        }
    }

    /// No index a quarter of the time; otherwise one to three of one or two random fields.
    static func randomIndexes(_ rng: inout SeededGenerator) -> [[String]] {
        guard rng.chance(75) else { return [] }
        var indexes: [[String]] = []
        // The dates too, whose rows a class keeps only when an index names them.
        let fields = DifferentialValues.fields + ["createdAt", "updatedAt"]
        for _ in 0..<rng.int(1...3) {
            let first = rng.pick(fields)
            var index = [first]
            if rng.chance(40), let second = fields.filter({ $0 != first }).randomElement(using: &rng) {
                index.append(second)
            }
            if !indexes.contains(index) { indexes.append(index) }
        }
        return indexes
    }
}
