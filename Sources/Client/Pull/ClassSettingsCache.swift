import Logging
import RooftopShared

/// The settings of each class (merge rules, declared indexes), fetched from the server once per
/// class and kept while the client lives.
actor ClassSettingsCache {
    private var settings: [String: ClassSettings] = [:]
    /// The classes whose declared indexes the local store was given.
    private var declared: Set<String> = []

    /// The class's rules (its settings, fetched when first asked for).
    /// - Throws: What fetching them throws.
    func rules(for className: String, api: RemoteAPI) async throws(RooftopError) -> MergeRules {
        MergeRules(classes: [className: try await settings(of: className, api: api).mergeRules])
    }

    /// The class's settings, fetched when first asked for.
    /// - Throws: What fetching them throws.
    func settings(of className: String, api: RemoteAPI) async throws(RooftopError) -> ClassSettings {
        if let cached = settings[className] { return cached }
        let fetched = try await api.classSettings(className)
        settings[className] = fetched
        return fetched
    }

    /// Gives the local store the indexes each of `classes` declares, once per class while the
    /// client lives (see ``LocalStore/declareIndexes(_:of:)``). The pull goes on without the
    /// indexes of a class whose settings cannot be fetched (its local queries read the field
    /// index): tried again with the next page when the server could not be reached.
    /// - Throws: `cache` when the store cannot be written.
    func declareIndexes(of classes: Set<String>, api: RemoteAPI, store: LocalStore) async throws(RooftopError) {
        for className in classes.subtracting(declared).sorted() {
            let fetched: ClassSettings
            do {
                fetched = try await settings(of: className, api: api)
            } catch {
                SyncEngine.logger.notice(
                    "the settings of a pulled class could not be fetched; its local queries read the field index",
                    metadata: ["class": "\(className)", "error": "\(error)"])
                // Asked again with the next page when asking again may succeed (the server could
                // not be reached or failed, the fetch was cancelled: ``RooftopError/isTransient``);
                // otherwise (refused) not while this client lives.
                if !error.isTransient { declared.insert(className) }
                continue
            }
            // Indexes the store refuses (a server older or newer than these rules) are not kept.
            do {
                try store.declareIndexes(fetched.indexes, of: className)
            } catch where error.code == .illegalArgument {
                SyncEngine.logger.warning(
                    "a class declares indexes this client cannot keep", metadata: ["class": "\(className)", "error": "\(error)"])
            }
            declared.insert(className)
        }
    }
}
