import RooftopShared

@testable import RooftopServer

/// Runs one query through the storage and through ``QueryEvaluator`` and describes any
/// difference.
enum DifferentialCheck {
    /// The page size passed to `find` when the query has no limit: more than any dataset holds.
    static let unlimited = 1_000_000

    /// What one comparison found.
    struct Outcome {
        /// The evaluator's total count.
        var totalCount: Int
        /// `nil` when both agree, else a report naming the query (text form), the readers and
        /// both answers.
        var mismatch: String?
    }

    /// Compares `find` (objects in order, total count) and `count` with the evaluator.
    static func compare(
        _ query: Query, readers: Set<String>?, dataset: DifferentialDataset, storage: any Storage
    ) async throws -> Outcome {
        let expected = QueryEvaluator.run(
            query, over: dataset.live, lookup: { _ in nil },
            canRead: { DifferentialDataset.canRead($0, readers: readers) })
        let page = try await storage.find(
            query, datastoreKey: dataset.datastoreKey, readers: readers, limit: query.limit ?? unlimited)
        let count = try await storage.count(query, datastoreKey: dataset.datastoreKey, readers: readers)

        var problems: [String] = []
        let got = page.objects.map(\.pointer)
        let want = expected.objects.map(\.pointer)
        if got != want { problems.append("objects differ") }
        if page.totalCount != expected.totalCount {
            problems.append("totalCount \(page.totalCount), evaluator \(expected.totalCount)")
        }
        if count != expected.totalCount { problems.append("count \(count), evaluator \(expected.totalCount)") }
        let byPointer = Dictionary(dataset.live.map { ($0.pointer, $0) }, uniquingKeysWith: { first, _ in first })
        for object in page.objects where byPointer[object.pointer].map({ $0 != object }) ?? false {
            let stored = describe(byPointer[object.pointer])
            problems.append("\(object.pointer) did not round-trip: stored \(stored), read \(describe(object))")
        }
        guard !problems.isEmpty else { return Outcome(totalCount: expected.totalCount, mismatch: nil) }

        var lines = [problems.joined(separator: "; ")]
        lines.append("query: \(render(query))")
        lines.append("readers: \(readers.map { $0.sorted().description } ?? "nil (admin)")")
        lines.append("sql:       \(got.map(\.description))")
        lines.append("evaluator: \(want.map(\.description))")
        // The objects involved: those only one side returned, or all of them when only the
        // order differs (at most 20, to keep the report readable).
        let differing = Set(got).symmetricDifference(Set(want))
        let shown = differing.isEmpty ? got : differing.sorted(by: { $0.description < $1.description })
        for pointer in shown.prefix(20) {
            lines.append("  \(pointer): \(describe(byPointer[pointer]))")
        }
        return Outcome(totalCount: expected.totalCount, mismatch: lines.map(visible).joined(separator: "\n"))
    }

    /// The query's text form with its parameters, and its class.
    static func render(_ query: Query) -> String {
        guard let form = try? query.textForm else { return "\(query)" }
        let parameters = form.parameters.isEmpty ? "" : " with parameters \(form.parameters)"
        return "\(query.className): \(form.text.isEmpty ? "(all)" : form.text)\(parameters)"
    }

    /// An object's fields, ACL, timestamps and version on one line.
    static func describe(_ object: ObjectSnapshot?) -> String {
        guard let object else { return "(not live in the dataset)" }
        let fields = object.fields.keys.sorted().map { field in
            "\(field)=\(object.fields[field].map(String.init(describing:)) ?? "")"
        }
        let acl = object.acl.map { acl in
            acl.entries.keys.sorted().map { principal in
                let access = acl.entries[principal]
                return "\(principal):\(access?.read == true ? "r" : "")\(access?.write == true ? "w" : "")"
            }
            .joined(separator: ",")
        }
        let createdAt = object.createdAt.map(String.init(describing:)) ?? "none"
        let updatedAt = object.updatedAt.map(String.init(describing:)) ?? "none"
        return "{\(fields.joined(separator: ", "))} acl=\(acl ?? "none") createdAt=\(createdAt) updatedAt=\(updatedAt)"
            + " v\(object.version)"
    }

    /// The text with control characters (NUL above all) written as `\u{…}` escapes, so that
    /// reports show them.
    static func visible(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
