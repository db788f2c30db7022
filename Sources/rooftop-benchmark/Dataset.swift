import RooftopShared

/// The objects a run creates, generated from `--seed`, and what queries over them must answer.
///
/// Each object has `fieldsPerObject` fields (at least 5):
/// - `category`: one of 20 strings (equality queries, counts);
/// - `score`: an integer in 0..<1,000,000 (range + order + limit);
/// - `tags`: a list of `listSize` strings out of 200 (`contains`);
/// - `location`: a point in a 1°×1° box (`near`);
/// - `sum`: an integer, 0 at creation, incremented by the update phase (merge rule `sum`);
/// - `extra0`, `extra1`, …: alternately a 24-character string and a double;
/// - `note`: a text of `textLength` letters, when not 0 (the workload: 420, which is
///   longer than the index keeps).
struct Dataset: Sendable {
    /// One object's generated fields.
    struct Object: Sendable {
        /// The object ID.
        var objectId: String
        /// Its fields, as created.
        var fields: [String: Value]
        /// `category`.
        var category: String
        /// `score`.
        var score: Int64
        /// `tags` (may repeat an element).
        var tags: [String]
        /// `location`.
        var location: GeoPoint
    }

    /// The class every object belongs to.
    static let className = "BenchItem"
    /// The categories (`cat-00` … `cat-19`).
    static let categories = (0..<20).map { "cat-" + twoDigits($0) }
    /// The tag vocabulary (`tag-000` … `tag-199`).
    static let tags = (0..<200).map { "tag-" + twoDigits($0 / 10) + String($0 % 10) }
    /// The box locations fall in: south-west corner and size in degrees.
    static let box = (latitude: 40.0, longitude: -4.0, size: 1.0)

    /// The objects, in creation order.
    let objects: [Object]
    /// Scores, ascending (range counts by binary search).
    let sortedScores: [Int64]
    /// How many objects have each category.
    let categoryCounts: [String: Int]
    /// How many objects have each tag at least once.
    let tagCounts: [String: Int]

    /// Generates `count` objects.
    /// - Parameters:
    ///   - count: How many objects.
    ///   - fieldsPerObject: Fields per object, at least 5.
    ///   - listSize: Elements of each `tags` list.
    ///   - textLength: Letters of each `note` (0: no note).
    ///   - random: The seeded source; object IDs use it too, with creation times 1 ms apart.
    init(count: Int, fieldsPerObject: Int, listSize: Int, textLength: Int, random: inout SeededGenerator) throws {
        let start = Timestamp.now.millisecondsSinceEpoch
        var objects: [Object] = []
        objects.reserveCapacity(count)
        for index in 0..<count {
            let objectId = ObjectID.generate(
                at: Timestamp(millisecondsSinceEpoch: start + Int64(index)), using: &random)
            let category = Dataset.categories[Int.random(in: 0..<Dataset.categories.count, using: &random)]
            let score = Int64.random(in: 0..<1_000_000, using: &random)
            let tags = (0..<listSize).map { _ in Dataset.tags[Int.random(in: 0..<Dataset.tags.count, using: &random)] }
            let location = try GeoPoint(
                latitude: Dataset.box.latitude + Double.random(in: 0..<Dataset.box.size, using: &random),
                longitude: Dataset.box.longitude + Double.random(in: 0..<Dataset.box.size, using: &random))
            var fields: [String: Value] = [
                "category": .string(category), "score": .int(score), "tags": .list(tags.map(Value.string)),
                "location": .geoPoint(location), "sum": .int(0),
            ]
            for extra in 0..<max(fieldsPerObject - 5, 0) {
                fields["extra\(extra)"] =
                    extra.isMultiple(of: 2)
                    ? .string(Dataset.text(length: 24, using: &random))
                    : .double(Double.random(in: -1000..<1000, using: &random))
            }
            if textLength > 0 { fields["note"] = .string(Dataset.text(length: textLength, using: &random)) }
            objects.append(
                Object(
                    objectId: objectId, fields: fields, category: category, score: score, tags: tags,
                    location: location))
        }
        self.objects = objects
        sortedScores = objects.map(\.score).sorted()
        categoryCounts = objects.reduce(into: [:]) { $0[$1.category, default: 0] += 1 }
        tagCounts = objects.reduce(into: [:]) { counts, object in
            for tag in Set(object.tags) { counts[tag, default: 0] += 1 }
        }
    }

    /// How many objects have `lower <= score < upper`.
    func scoreCount(from lower: Int64, below upper: Int64) -> Int {
        firstIndex(notBelow: upper) - firstIndex(notBelow: lower)
    }

    /// How many objects lie within `meters` of `point` (the shared haversine distance).
    func locationCount(near point: GeoPoint, within meters: Double) -> Int {
        objects.reduce(0) { $0 + ($1.location.distanceMeters(to: point) <= meters ? 1 : 0) }
    }

    /// A random point inside the locations' box.
    static func randomPoint(using random: inout SeededGenerator) throws -> GeoPoint {
        try GeoPoint(
            latitude: box.latitude + Double.random(in: 0..<box.size, using: &random),
            longitude: box.longitude + Double.random(in: 0..<box.size, using: &random))
    }

    private func firstIndex(notBelow value: Int64) -> Int {
        var low = 0
        var high = sortedScores.count
        while low < high {
            let middle = (low + high) / 2
            if sortedScores[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static func twoDigits(_ number: Int) -> String {
        number < 10 ? "0\(number)" : "\(number)"
    }

    private static func text(length: Int, using random: inout SeededGenerator) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<length).map { _ in letters[Int.random(in: 0..<letters.count, using: &random)] })
    }
}
