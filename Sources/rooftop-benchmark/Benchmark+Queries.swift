import RooftopShared

extension Benchmark {
    /// The query phases, each `queryRepeats` queries with fresh random parameters, one after the
    /// other from one client. Every answer's total count (and its first page where cheap) is
    /// checked against the data set.
    func runQueries() async throws {
        let objectCount = dataset.objects.count
        try await queryPhase("query eq", text: "where category = ? limit 100") { random in
            let category = Dataset.categories[Int.random(in: 0..<Dataset.categories.count, using: &random)]
            return (
                [.string(category)],
                { answer in
                    let expected = self.dataset.categoryCounts[category] ?? 0
                    try self.requireCount(answer, expected, limit: 100, "category = \(category)")
                    try self.require(
                        answer.objects.allSatisfy { $0.fields["category"] == .string(category) },
                        "category = \(category) answered other categories")
                }
            )
        }
        try await queryPhase("query range", text: "where score >= ? and score < ? order by score desc limit 50") {
            random in
            let lower = Int64.random(in: 0..<950_000, using: &random)
            let upper = lower + 50_000
            return (
                [.int(lower), .int(upper)],
                { answer in
                    let expected = self.dataset.scoreCount(from: lower, below: upper)
                    try self.requireCount(answer, expected, limit: 50, "score in \(lower)..<\(upper)")
                    let scores = answer.objects.compactMap { $0.fields["score"]?.intValue }
                    let wanted = Array(
                        self.dataset.sortedScores.filter { $0 >= lower && $0 < upper }.reversed().prefix(50))
                    try self.require(scores == wanted, "score in \(lower)..<\(upper) answered \(scores), not \(wanted)")
                }
            )
        }
        try await queryPhase("query contains", text: "where tags contains ? limit 100") { random in
            let tag = Dataset.tags[Int.random(in: 0..<Dataset.tags.count, using: &random)]
            return (
                [.string(tag)],
                { answer in
                    try self.requireCount(answer, self.dataset.tagCounts[tag] ?? 0, limit: 100, "tags contains \(tag)")
                }
            )
        }
        try await queryPhase("query near", text: "where location near ? limit 20") { random in
            let point = try Dataset.randomPoint(using: &random)
            return (
                [.geoPoint(point)],
                { answer in
                    try self.requireCount(answer, objectCount, limit: 20, "location near \(point)")
                    let distances = answer.objects.compactMap {
                        $0.fields["location"]?.geoPointValue?.distanceMeters(to: point)
                    }
                    let nearest = self.dataset.objects.map { $0.location.distanceMeters(to: point) }.min()
                    try self.require(
                        distances == distances.sorted() && distances.first == nearest,
                        "location near \(point) is not ordered by distance from the nearest object")
                }
            )
        }
        try await queryPhase("query near 5km", text: "where location near ? within ? meters limit 20") { random in
            let point = try Dataset.randomPoint(using: &random)
            return (
                [.geoPoint(point), .double(5000)],
                { answer in
                    let expected = self.dataset.locationCount(near: point, within: 5000)
                    try self.requireCount(answer, expected, limit: 20, "location near \(point) within 5 km")
                }
            )
        }
    }

    /// The count phases: every object, and one category.
    func runCounts() async throws {
        try await countPhase("count all", text: "") { _ in ([], self.dataset.objects.count) }
        try await countPhase("count eq", text: "where category = ?") { random in
            let category = Dataset.categories[Int.random(in: 0..<Dataset.categories.count, using: &random)]
            return ([.string(category)], self.dataset.categoryCounts[category] ?? 0)
        }
    }

    /// Runs `text` `queryRepeats` times; `parameters` picks each run's parameters and the check
    /// of its answer. A query the server stops at its request time limit (`503 timeout`) ends
    /// the phase, noted, and the run goes on (`query near` without a distance walks the whole
    /// class, over 30 s at a million objects).
    /// Phase `query eq, small datastore`: `query eq` in a datastore of few objects (client 1's
    /// `default`, of `push many datastores`) on a server holding many more, whose cost should be
    /// its own datastore's, not the server's. `categoryCounts`: that datastore's objects by category.
    func querySmallDatastore(client: BenchmarkHTTPClient, categoryCounts: [String: Int]) async throws {
        try await queryPhase(
            "query eq, small datastore", text: "where category = ? limit 100", client: client, datastore: .default
        ) { random in
            let category = Dataset.categories[Int.random(in: 0..<Dataset.categories.count, using: &random)]
            return (
                [.string(category)],
                { answer in
                    try self.requireCount(answer, categoryCounts[category] ?? 0, limit: 100, "category = \(category), small datastore")
                }
            )
        }
    }

    private func queryPhase(
        _ name: String, text: String, client: BenchmarkHTTPClient? = nil, datastore: DatastoreID? = nil,
        parameters: (inout SeededGenerator) throws -> ([Value], (QueryResponse) throws -> Void)
    ) async throws {
        var random = self.random.derived(UInt64(results.count))
        let client = client ?? puller
        let datastore = datastore ?? self.datastore
        try await measure(name, unit: "req") { samples in
            var answered = 0
            for _ in 0..<settings.queryRepeats {
                let (values, check) = try parameters(&random)
                let answer: BenchmarkHTTPClient.Answer<QueryResponse>
                do {
                    answer = try await client.call(
                        API.queryObjects, API.queryObjects.path(datastore.rawValue),
                        body: QueryRequest.text(className: Dataset.className, text: text, parameters: values))
                } catch BenchmarkError.request(let text) where text.contains("HTTP 503") && text.contains("\"timeout\"") {
                    Report.progress("\(name): stopped by the server's request time limit after \(answered) queries")
                    return (answered, ["stopped by the request time limit": 1])
                }
                await samples.add([answer.elapsed])
                try check(answer.value)
                answered += 1
            }
            return (answered, [:])
        }
    }

    /// Counts `text` `queryRepeats` times; `parameters` picks the parameters and the expected count.
    private func countPhase(
        _ name: String, text: String, parameters: (inout SeededGenerator) throws -> ([Value], Int)
    ) async throws {
        var random = self.random.derived(UInt64(results.count))
        let client = puller
        try await measure(name, unit: "req") { samples in
            for _ in 0..<settings.queryRepeats {
                let (values, expected) = try parameters(&random)
                let answer = try await client.call(
                    API.countObjects, API.countObjects.path(datastore.rawValue),
                    body: QueryRequest.text(className: Dataset.className, text: text, parameters: values))
                await samples.add([answer.elapsed])
                try require(answer.value.count == expected, "\(name) counted \(answer.value.count), not \(expected)")
            }
            return (settings.queryRepeats, [:])
        }
    }

    /// The total count must be `expected`, and the page `min(expected, limit)` objects.
    private func requireCount(_ answer: QueryResponse, _ expected: Int, limit: Int, _ what: String) throws {
        try require(answer.totalCount == expected, "\(what): totalCount \(answer.totalCount), expected \(expected)")
        try require(
            answer.objects.count == min(expected, limit),
            "\(what): \(answer.objects.count) objects on the page, expected \(min(expected, limit))")
    }
}
