/// What the server did with one mutation of a push.
///
/// A server that receives a mutation ID it has already applied answers with the first result
/// again, so a retried push gets the same answer.
///
/// Wire form:
/// - applied: `{"mutationId": "m1", "status": "applied", "version": 4, "object": {<ObjectSnapshot>},
///   "merges": [<MergeDecision>]}`; `object` is the object after the change, absent when the change
///   deleted it; `merges` lists the merge decisions taken when the mutation met concurrent changes
///   (absent when none).
/// - rejected: `{"mutationId": "m1", "status": "rejected", "error": {"code": "...", "message": "..."}}`.
///
/// ```swift
/// switch result {
/// case .applied(_, let version, let object, _): outbox.acknowledge(version, object)
/// case .rejected(_, let error): outbox.setAside(error)
/// }
/// ```
public enum MutationResult: Equatable, Sendable {
    /// The change was applied: the object's new version and state (`nil` after a delete), and the
    /// merge decisions taken against concurrent changes.
    case applied(mutationId: MutationID, version: Int64, object: ObjectSnapshot?, merges: [MergeDecision] = [])
    /// The change was refused and nothing of it was applied.
    case rejected(mutationId: MutationID, error: RooftopError)

    /// The mutation this result is about.
    public var mutationId: MutationID {
        switch self {
        case .applied(let id, _, _, _), .rejected(let id, _): id
        }
    }

    /// Whether the change was applied.
    public var isApplied: Bool {
        if case .applied = self { true } else { false }
    }

    /// The error, when the change was rejected.
    public var error: RooftopError? {
        if case .rejected(_, let error) = self { error } else { nil }
    }

    /// The result without the object: what a compact push answers (``PushRequest/compact``).
    /// The version and the merge decisions stay; a rejection is unchanged.
    public var compacted: MutationResult {
        switch self {
        case .applied(let id, let version, _, let merges): .applied(mutationId: id, version: version, object: nil, merges: merges)
        case .rejected: self
        }
    }
}

extension MutationResult: Codable {
    private enum CodingKeys: String, CodingKey { case mutationId, status, version, object, error, merges }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for an unknown status or a missing member.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(MutationID.self, forKey: .mutationId)
        let status = try container.decode(String.self, forKey: .status)
        switch status {
        case "applied":
            self = .applied(
                mutationId: id, version: try container.decode(Int64.self, forKey: .version),
                object: try container.decodeIfPresent(ObjectSnapshot.self, forKey: .object),
                merges: try container.decodeIfPresent([MergeDecision].self, forKey: .merges) ?? [])
        case "rejected":
            self = .rejected(mutationId: id, error: try container.decode(RooftopError.self, forKey: .error))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .status, in: container, debugDescription: "unknown status '\(status)': use applied or rejected")
        }
    }

    /// Encodes the wire form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mutationId, forKey: .mutationId)
        switch self {
        case .applied(_, let version, let object, let merges):
            try container.encode("applied", forKey: .status)
            try container.encode(version, forKey: .version)
            try container.encodeIfPresent(object, forKey: .object)
            if !merges.isEmpty { try container.encode(merges, forKey: .merges) }
        case .rejected(_, let error):
            try container.encode("rejected", forKey: .status)
            try container.encode(error, forKey: .error)
        }
    }
}
