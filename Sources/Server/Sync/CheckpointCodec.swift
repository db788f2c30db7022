import Crypto
import Foundation
import RooftopShared

/// Checkpoints are opaque to clients but carry what the server needs to resume a pull: the
/// datastore, the user, the last sequence number delivered, and the principals the user held
/// then (to find what they lost access to since). They are signed with a server secret so that
/// they cannot be forged or moved to another user or datastore.
struct CheckpointCodec: Sendable {
    /// What a checkpoint says. The wire keys are one letter each (`d`, `u`, `s`, `p`, `r`, `h`):
    /// checkpoints travel with every pull.
    struct State: Codable, Equatable {
        /// The datastore's storage key.
        var datastoreKey: Int64
        /// The user ID, empty for anonymous and admin callers.
        var userId: String
        /// The last sequence delivered.
        var sequence: Int64
        /// The principals the user held.
        var principals: [String]
        /// While paging: the estimate of what was left after this checkpoint, counted down page by
        /// page so that a long pull does not recount its remaining changes on every page.
        var remaining: Int?
        /// The datastore's ``DatastoreRecord/historyFrom`` when the pull began (absent: 0). Until
        /// the history moves past it, the checkpoint misses nothing, even below `historyFrom`.
        var historyFrom: Int64?

        private enum CodingKeys: String, CodingKey {
            case datastoreKey = "d", userId = "u", sequence = "s", principals = "p", remaining = "r", historyFrom = "h"
        }
    }

    private let key: SymmetricKey

    init(secret: [UInt8]) {
        self.key = SymmetricKey(data: secret)
    }

    /// Encodes and signs a state.
    /// - Throws: `internal` when the state cannot be encoded (never expected: it is numbers and
    ///   strings), rather than signing an empty checkpoint that no pull could resume from.
    func encode(_ state: State) throws(RooftopError) -> Checkpoint {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload: Data
        do {
            payload = try encoder.encode(state)
        } catch {
            throw RooftopError(.internal, "a checkpoint could not be encoded", cause: error)
        }
        let signature = HMAC<SHA256>.authenticationCode(for: payload, using: key)
        return Checkpoint(Base64URL.encode(payload) + "." + Base64URL.encode(signature))
    }

    /// Verifies and decodes a checkpoint for a datastore and user.
    /// - Throws: `illegalArgument` when it is malformed, forged, or belongs to another datastore
    ///   or user.
    func decode(_ checkpoint: Checkpoint, datastoreKey: Int64, userId: String) throws(RooftopError) -> State {
        let parts = checkpoint.rawValue.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(String(parts[0])),
            let signature = Base64URL.decode(String(parts[1])),
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: key),
            let state = try? JSONDecoder().decode(State.self, from: payload)
        else {
            throw RooftopError(.illegalArgument, "the checkpoint is not valid: pull again without one")
        }
        guard state.datastoreKey == datastoreKey, state.userId == userId else {
            throw RooftopError(.illegalArgument, "the checkpoint belongs to another datastore or user")
        }
        return state
    }
}
