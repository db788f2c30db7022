import NIOHTTP1
import RooftopShared

extension Benchmark {
    /// The client that pulls: another user than the creator when there is one, as a second
    /// device syncing the shared datastore would.
    var puller: BenchmarkHTTPClient { clients[pullerIndex] }

    /// The index of the pulling user.
    var pullerIndex: Int { min(1, clients.count - 1) }

    /// Phase `pull full`: the whole datastore from no checkpoint, `pageSize` changes a page.
    func pullFull() async throws {
        try await measure("pull full", unit: "obj", trend: true) { samples in
            let pages = try await pullPages(since: nil, samples: samples)
            try require(
                pulledSums.count == dataset.objects.count,
                "the full pull delivered \(pulledSums.count) objects, not \(dataset.objects.count)")
            return (pages.changes, pages.notes)
        }
    }

    /// Phase `pull incremental`: from the full pull's checkpoint, after the update phase: every
    /// updated object once, with its merged `sum`. The sums must add up to the increments pushed.
    func pullIncremental() async throws {
        try await measure("pull incremental", unit: "obj") { samples in
            let pages = try await pullPages(since: checkpoint, samples: samples)
            try require(
                pages.changes == updatedObjects.count,
                "the incremental pull delivered \(pages.changes) changes,"
                    + " not the \(updatedObjects.count) updated objects")
            let total = pulledSums.values.reduce(0, +)
            try require(
                total == Int64(settings.updates),
                "the sums add up to \(total), not the \(settings.updates) increments pushed (a lost or doubled merge)")
            return (pages.changes, pages.notes)
        }
    }

    /// Phase `pull idle`: `queryRepeats` pulls from an up-to-date checkpoint (nothing new): what
    /// a synced client pays to ask "anything new?".
    func pullIdle() async throws {
        let since = checkpoint
        try await measure("pull idle", unit: "req") { samples in
            for _ in 0..<settings.queryRepeats {
                let answer = try await puller.call(
                    API.pull, body: PullRequest(datastore: datastore, since: since, limit: settings.pageSize))
                await samples.add([answer.elapsed])
                try require(
                    answer.value.changes.isEmpty && !answer.value.hasMore,
                    "an up-to-date pull answered \(answer.value.changes.count) changes")
            }
            return (settings.queryRepeats, [:])
        }
    }

    /// Pulls pages from `since` until `hasMore` is false, recording each object's `sum` and the
    /// final checkpoint. As the client library does, the next page is asked for as soon as a
    /// page is here (its continuation read without decoding it), and the page is decoded while
    /// the server works on the next: one request in flight at a time, each page's time from its
    /// request to its last byte.
    func pullPages(
        since: Checkpoint?, samples: SampleCollector
    ) async throws -> (changes: Int, notes: [String: Double]) {
        let puller = self.puller
        let datastore = self.datastore
        let pageSize = settings.pageSize
        func request(_ since: Checkpoint?) -> Task<BenchmarkHTTPClient.Exchange<PullResponse>, any Error> {
            Task { try await puller.exchange(API.pull, body: PullRequest(datastore: datastore, since: since, limit: pageSize)) }
        }
        var checkpoint = since
        var pages = 0
        var changes = 0
        var bytes = 0
        var transfer = Duration.zero
        var pending = request(checkpoint)
        defer { pending.cancel() }
        while true {
            let exchange = try await pending.value
            let next = PullResponse.continuation(of: exchange.reply.body)
            if let next { pending = request(next) }
            let answer = try exchange.decoded()
            await samples.add([answer.elapsed])
            pages += 1
            bytes += answer.receivedBytes
            transfer += answer.elapsed
            let page = answer.value
            for change in page.changes {
                guard case .upsert(let object) = change else {
                    throw BenchmarkError.wrongResult("a pull answered \(change) where only upserts were expected")
                }
                pulledSums[object.objectId] = object.fields["sum"]?.intValue ?? -1
            }
            changes += page.changes.count
            checkpoint = page.checkpoint
            try require(
                next == (page.hasMore ? page.checkpoint : nil),
                "a page's continuation \(String(describing: next)) is not its checkpoint \(page.checkpoint)")
            if !page.hasMore { break }
            try require(pages < 1_000_000, "the pull never finished")
        }
        self.checkpoint = checkpoint
        let mebibytes = Double(bytes) / 1_048_576
        return (
            changes,
            [
                "pages": Double(pages), "response MiB": mebibytes,
                "MiB/s (in requests)": transfer > .zero ? mebibytes / transfer.seconds : 0,
            ]
        )
    }
}
