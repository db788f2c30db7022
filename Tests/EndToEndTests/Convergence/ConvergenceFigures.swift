import RooftopTestSupport

/// What one or more convergence iterations did: changes and their outcomes, faults injected.
struct ConvergenceFigures: Sendable {
    var iterations = 0
    var replicas = 0
    var processReplicas = 0
    /// Replicas that joined half-way through (the bulk iterations), and first syncs loaded in bulk.
    var lateJoins = 0
    var bulkLoads = 0
    var mergeRules = ""
    /// Changes queued, and commands that queued nothing (object not stored locally...).
    var changes = 0
    var skipped = 0
    /// Outcomes of the queued changes, as the ledger and the final statuses tell.
    var acknowledged = 0
    var rejected = 0
    /// Refusals by error code.
    var rejectionCodes: [String: Int] = [:]
    /// Changes whose acknowledgement went with a killed process (applied at most once).
    var unknown = 0
    var serverKills = 0
    /// Server SIGKILLs while a replica's command (a push, a sharing change) or a role change was
    /// in flight, and how many of those commands failed.
    var commandKills = 0
    var killedCommandsFailed = 0
    var processKills = 0
    /// The merge choices checked in the servers' histories.
    var mergeChoices = MergeChoiceCheck.Figures()
    var sharingChanges = 0
    var roleChanges = 0
    /// Role changes whose request failed in transport (a reset connection): they may or may not
    /// have happened.
    var roleChangesLost = 0
    /// Proxy modes set, by name.
    var modes: [String: Int] = [:]
    /// Proxy statistics summed over every replica's proxy.
    var refused = 0
    var resets = 0
    var cut = 0
    var blackholed = 0
    var halfClosed = 0

    mutating func count(_ mode: FaultProxy.Mode) {
        let name: String =
            switch mode {
            case .passThrough: "passThrough"
            case .latency: "latency"
            case .resetRequest: "resetRequest"
            case .resetResponse: "resetResponse"
            case .blackhole: "blackhole"
            case .halfOpen: "halfOpen"
            case .down: "down"
            }
        modes[name, default: 0] += 1
    }

    mutating func add(_ statistics: FaultProxy.Statistics) {
        refused += statistics.refused
        resets += statistics.resets
        cut += statistics.cut
        blackholed += statistics.blackholed
        halfClosed += statistics.halfClosed
    }

    /// Adds another iteration's figures.
    mutating func add(_ other: ConvergenceFigures) {
        iterations += other.iterations
        replicas += other.replicas
        processReplicas += other.processReplicas
        lateJoins += other.lateJoins
        bulkLoads += other.bulkLoads
        changes += other.changes
        skipped += other.skipped
        acknowledged += other.acknowledged
        rejected += other.rejected
        rejectionCodes.merge(other.rejectionCodes, uniquingKeysWith: +)
        unknown += other.unknown
        serverKills += other.serverKills
        commandKills += other.commandKills
        killedCommandsFailed += other.killedCommandsFailed
        mergeChoices.add(other.mergeChoices)
        processKills += other.processKills
        sharingChanges += other.sharingChanges
        roleChanges += other.roleChanges
        roleChangesLost += other.roleChangesLost
        modes.merge(other.modes, uniquingKeysWith: +)
        refused += other.refused
        resets += other.resets
        cut += other.cut
        blackholed += other.blackholed
        halfClosed += other.halfClosed
    }

    /// One line for the log.
    var summary: String {
        let modeText = modes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let codeText = rejectionCodes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return """
            \(iterations) iterations, \(replicas) replicas (\(processReplicas) in their own process, \(lateJoins) joined \
            half-way, \(bulkLoads) first syncs loaded in bulk); \
            \(changes) changes queued (\(acknowledged) acknowledged, \(rejected) rejected [\(codeText)], \(unknown) unknown after \
            a crash), \(skipped) skipped; merge choices checked [\(mergeChoices.summary)]; faults: \(serverKills) server \
            SIGKILLs (\(commandKills) during a command, \(killedCommandsFailed) of those commands failed), \(processKills) client process \
            SIGKILLs, proxy modes set [\(modeText)], connections refused \(refused), reset mid-stream \(resets), \
            cut \(cut), blackholed \(blackholed), half-closed \(halfClosed); \(sharingChanges) sharing changes, \
            \(roleChanges) role changes (\(roleChangesLost) more lost in transport)
            """
    }
}
