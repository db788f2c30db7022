import Foundation
@testable import Rooftop
import RooftopShared

extension RooftopClient {
    /// Signs up with the tests' password.
    func signUpForTest(_ username: String) async throws -> UserInfo {
        try await signUp(username: username, password: "secret-password")
    }

    /// The keys stored locally in a datastore (deleted ones excluded).
    func storedKeys(in datastore: DatastoreID = .default, className: String? = nil) throws -> Set<ObjectKey> {
        Set(try core.store.objects(scope: core.scope, datastore: datastore, className: className).map(\.key))
    }
}
