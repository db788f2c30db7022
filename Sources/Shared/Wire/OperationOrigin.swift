import Crypto
import Foundation

/// The origin tag of a committed operation (``OperationRecord/origin``): which caller's push
/// mutation committed it, opaque to everyone else.
///
/// The tag is `H(scope)[0..<16] "." H(scope, mutation ID)[0..<32]` (hex SHA-256): the same for a
/// retry of the mutation, different for another caller's identical mutation ID, and it names
/// neither the caller nor the ID. Its first part tells the operations of one caller from those
/// of others (``scopeTag(_:)``). The server computes it when it commits a push mutation; a
/// client computes it for its own mutations, to tell its own operations in an object's
/// history from the concurrent ones of others.
///
/// ```swift
/// let mine = OperationOrigin.make(mutationId: id, scope: OperationOrigin.scope(userId: "u1"))
/// let foreign = history.filter { $0.origin != mine }
/// ```
public enum OperationOrigin {
    /// The idempotency scope of a caller: mutation IDs are unique in it. A user's own scope, or
    /// one shared scope each for anonymous and admin callers.
    public static func scope(userId: String?, isAdmin: Bool = false) -> String {
        if isAdmin { return ":admin" }
        return userId.map { "user:" + $0 } ?? ":anonymous"
    }

    /// The origin of the operation a push mutation commits in `scope`.
    public static func make(mutationId: MutationID, scope: String) -> String {
        make(mutationId: mutationId.rawValue, scope: scope)
    }

    /// The origin of the operation a push mutation commits in `scope`, from the ID's text.
    public static func make(mutationId: String, scope: String) -> String {
        String(hex("scope\u{0}" + scope).prefix(16)) + "." + String(hex(scope + "\u{0}" + mutationId).prefix(32))
    }

    /// The scope tag an origin starts with (its part before the dot); `nil` for origins
    /// without one (operations committed before tags existed, or not through a push).
    public static func scopeTag(_ origin: String?) -> Substring? {
        guard let origin, let dot = origin.firstIndex(of: "."), dot != origin.startIndex else { return nil }
        return origin[..<dot]
    }

    /// Hex SHA-256 of the text's UTF-8 bytes.
    public static func hex(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
