import Logging
import RooftopShared
import ServiceLifecycle

/// This server process's link to the others sharing its database: on PostgreSQL, messages over
/// ``PostgresNotifier``; with the embedded SQLite storage there are no others and it does nothing.
///
/// What each process keeps for itself is kept right through it: live subscribers hear of writes
/// made through any process (the storage announces each write in its transaction), and caches of
/// roles and class settings, revoked sessions and failed log-ins are shared by the messages sent
/// here after each change.
struct ClusterLink: Sendable {
    /// The notifier, when there are other processes to tell.
    let notifier: PostgresNotifier?
    let logger: Logger

    /// The link for `storage`: a live one for ``PostgresStorage``, none otherwise.
    init(storage: any DatastoreStorage, logger: Logger) {
        notifier = (storage as? PostgresStorage)?.notifier
        self.logger = logger
    }

    /// Tells the other processes, after the change it reports has committed. A failure is logged
    /// and not thrown: the change stands, and the others catch up at their next resync.
    ///
    /// The message goes out even when the caller's task was cancelled (a request past its
    /// deadline): it tells of something already committed, which the other processes must hear.
    func send(_ message: ClusterMessage) async {
        guard let notifier else { return }
        do {
            try await Task { try await notifier.send(message) }.value
        } catch {
            logger.warning("could not tell the other server processes", metadata: ["error": "\(error)"])
        }
    }
}

/// Acts on what the other server processes tell this one, until graceful shutdown.
struct ClusterListener: Service {
    let notifier: PostgresNotifier
    let services: ServerServices
    let logger: Logger

    func run() async throws {
        let messages = notifier.messages()
        await cancelWhenGracefulShutdown {
            for await message in messages {
                do {
                    try await handle(message)
                } catch {
                    logger.warning(
                        "could not act on a message from another server process",
                        metadata: ["message": "\(message)", "error": "\(error)"])
                }
            }
        }
    }

    /// Acts on one message.
    /// - Throws: Storage errors while reading what the message refers to.
    func handle(_ message: ClusterMessage) async throws {
        let live = services.live
        switch message {
        case .changed(let key, let sequence, let className, let readers):
            guard await live.wants(datastoreKey: key), let record = try await services.storage.datastore(key: key) else {
                return
            }
            let permissions = try await services.classes.permissions(of: className)
            await live.publish(datastore: record, sequence: sequence, permissions: permissions, readers: readers.map(Set.init))
        case .sessionRevoked(let hash):
            await live.revokeSession(hash: hash)
        case .rolesChanged:
            services.roles.invalidate()
            await live.refreshRoles(try await services.roles.graph())
        case .classChanged(let className):
            services.classes.forget(className)
        case .datastoreChanged:
            // Datastores are read afresh for every request and every change announced.
            break
        case .loginFailed(let keys):
            await services.auth.noteLogIns(failed: true, keys: keys)
        case .loginSucceeded(let keys):
            await services.auth.noteLogIns(failed: false, keys: keys)
        case .resync:
            // Messages may have been missed: drop what they would have refreshed, and tell every
            // subscriber to pull (one that finds nothing new loses nothing).
            services.roles.invalidate()
            services.classes.forgetAll()
            await live.refreshRoles(try await services.roles.graph())
            for key in await live.subscribedDatastoreKeys() {
                guard let record = try await services.storage.datastore(key: key) else { continue }
                await live.publish(datastore: record, sequence: record.sequence, permissions: nil, readers: nil)
            }
        }
    }
}

extension ClusterListener: CustomStringConvertible {
    /// How service lifecycle logs name it at `debug`: the channel, not the services it holds
    /// (their reflection ran to megabytes, the OpenAPI document's bytes included).
    var description: String { "ClusterListener(channel: \(notifier.channel))" }
}
