import Foundation
import RooftopShared

/// One command for a ``ChaosReplica``: a change to make through the client library (queued in
/// its offline queue), or a question about its state. Commands travel as JSON lines to
/// `rooftop-chaos-client` processes, and are handed directly to in-process replicas.
public struct ChaosCommand: Codable, Sendable, Equatable {
    /// What to do.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// Create `objectId` with `a = int`, `b = text`, an empty list `l` and the ACL named by `acl`.
        case create
        /// Set the integer field `a` to `int`.
        case setA
        /// Set the string field `b` to `text`.
        case setB
        /// Add `int` to the counter `n`.
        case increment
        /// Append `text` to the list `l`.
        case append
        /// Insert `text` into `l` at `pick` modulo its length plus one.
        case insert
        /// Remove the element of `l` at `pick` modulo its length.
        case remove
        /// Move an element of `l` (positions from `pick`).
        case move
        /// Replace the object's ACL with the one named by `acl`.
        case changeACL
        /// Delete the object.
        case delete
        /// As the datastore's owner, give `principal` the sharing role `text`.
        case share
        /// Wait until the offline queue is empty, then pull the datastore.
        case syncUntilIdle
        /// Send the offline queue now (`sync.push`), beside continuous sync; a failure is the
        /// reply's error.
        case push
        /// The objects of the datastore the user may read, as stored locally.
        case snapshot
        /// The queue status of the mutations `ids`, and every refused change.
        case statuses
        /// Shut the client down and exit (processes) or close (in-process).
        case stop
    }

    /// What to do.
    public var kind: Kind
    /// The object changed (for object commands).
    public var objectId: String?
    /// An integer argument (a value, an increment).
    public var int: Int64?
    /// A text argument (a value, a list element, a sharing role).
    public var text: String?
    /// A random number the replica uses to choose list positions.
    public var pick: UInt64?
    /// An ACL name: `public`, `readOnly` (everyone reads, the creator writes), `crew`
    /// (members of the role `crew` read and write) or `creator`.
    public var acl: String?
    /// A principal in its wire form (`*`, a user ID, `role:Name`), for `share`.
    public var principal: String?
    /// Mutation IDs, for `statuses`.
    public var ids: [String]?

    /// A command.
    public init(
        _ kind: Kind, objectId: String? = nil, int: Int64? = nil, text: String? = nil, pick: UInt64? = nil,
        acl: String? = nil, principal: String? = nil, ids: [String]? = nil
    ) {
        self.kind = kind
        self.objectId = objectId
        self.int = int
        self.text = text
        self.pick = pick
        self.acl = acl
        self.principal = principal
        self.ids = ids
    }
}

/// A replica's answer to one ``ChaosCommand``.
public struct ChaosReply: Codable, Sendable, Equatable {
    /// The ID of the mutation the command queued (durably, before the reply).
    public var mutationId: String?
    /// Why the command changed nothing (the object is not stored locally, nothing to save...).
    public var skipped: String?
    /// What a list command touched (the removed or moved element), for the model.
    public var element: String?
    /// The error of a command that failed (`share` or `syncUntilIdle` without a connection...).
    public var error: String?
    /// For `snapshot`: the objects by ID.
    public var objects: [String: ObjectSnapshot]?
    /// For `snapshot`: the IDs each of ``ChaosReplica/checkedQueries`` answers locally, by name.
    public var checked: [String: [String]]?
    /// For `snapshot`: the local count of the class.
    public var count: Int?
    /// For `snapshot`: bulk loads of a first sync this replica's process began.
    public var bulkLoads: Int?
    /// For `snapshot`: what the local store's kept counts and copies say that its rows do not
    /// (``SyncEngine/storeInconsistencies()``).
    public var storeInconsistencies: [String]?
    /// For `statuses`: each ID's status (`pending`, `sent`, `acknowledged:<version>`,
    /// `rejected:<code>`, or `unknown`).
    public var statuses: [String: String]?
    /// For `statuses`: every change set aside as refused, by mutation ID, with its error code.
    public var rejected: [String: String]?

    /// An empty reply.
    public init() {}
}

/// Something the offline queue reported on its own (``ChaosReplica`` forwards acknowledgements
/// and refusals as they happen).
public struct ChaosEvent: Codable, Sendable, Equatable {
    /// The mutation.
    public var mutationId: String
    /// The object's version after an acknowledgement.
    public var acknowledgedVersion: Int64?
    /// The error code of a refusal.
    public var rejectedCode: String?
    /// The object of a merge decision.
    public var objectId: String?
    /// A merge decision the client saw: the server's answering a push (of `mutationId`), or the
    /// client's own rebasing queued changes (`mutationId` empty).
    public var merge: MergeDecision?

    /// An event.
    public init(
        mutationId: String, acknowledgedVersion: Int64? = nil, rejectedCode: String? = nil, objectId: String? = nil,
        merge: MergeDecision? = nil
    ) {
        self.mutationId = mutationId
        self.acknowledgedVersion = acknowledgedVersion
        self.rejectedCode = rejectedCode
        self.objectId = objectId
        self.merge = merge
    }
}

/// One line a `rooftop-chaos-client` process prints: ready, a reply, or an event.
public struct ChaosLine: Codable, Sendable {
    /// The replica is open and reads commands.
    public var ready: Bool?
    /// The answer to the last command.
    public var reply: ChaosReply?
    /// An event of the offline queue.
    public var event: ChaosEvent?
    /// The process could not start.
    public var fatal: String?

    /// A line.
    public init(ready: Bool? = nil, reply: ChaosReply? = nil, event: ChaosEvent? = nil, fatal: String? = nil) {
        self.ready = ready
        self.reply = reply
        self.event = event
        self.fatal = fatal
    }
}

/// Where and as whom a replica connects.
public struct ChaosReplicaSettings: Codable, Sendable {
    /// The server's (or the proxy's) base URL.
    public var serverURL: String
    /// The PEM text of the CA to trust.
    public var caPEM: String
    /// The local datastore's file.
    public var cacheFile: String
    /// The user's name and password (logged in on first open; restored from the file after).
    public var username: String
    /// The user's password.
    public var password: String
    /// The shareable datastore the replica works in.
    public var datastore: String
    /// How long one request may take, in milliseconds.
    public var requestTimeoutMilliseconds: Int
    /// Whether a first sync with a few changes ahead is loaded in bulk
    /// (``ChaosReplica/bulkLoadThresholds``).
    public var bulkInitialSync: Bool

    /// Settings.
    public init(
        serverURL: String, caPEM: String, cacheFile: String, username: String, password: String, datastore: String,
        requestTimeoutMilliseconds: Int, bulkInitialSync: Bool = false
    ) {
        self.bulkInitialSync = bulkInitialSync
        self.serverURL = serverURL
        self.caPEM = caPEM
        self.cacheFile = cacheFile
        self.username = username
        self.password = password
        self.datastore = datastore
        self.requestTimeoutMilliseconds = requestTimeoutMilliseconds
    }
}
