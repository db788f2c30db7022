import Foundation
import HTTPTypes
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import RooftopShared
import ServiceLifecycle

/// The live-notification WebSocket at `/v1/live`.
///
/// The client upgrades with `X-Rooftop-Application-Id` (and optionally its session token), then
/// sends `{"type": "subscribe", "datastores": [...], "sessionToken": "..."}`; the server answers
/// `{"type": "subscribed", ...}` and from then on `{"type": "changed", "datastore": ...,
/// "sequence": ...}` whenever a change the caller may read is committed there. The client pulls
/// to get the change. Errors (bad message, unknown datastore, bad session) come as
/// `{"type": "error", ...}` without closing the connection.
struct LiveEndpoint: Sendable {
    let services: ServerServices
    let appId: String

    /// Messages larger than this are refused.
    static let maxMessageBytes = 64 * 1024

    /// The path the upgrade is accepted on.
    static let path = API.live.operation.path

    func shouldUpgrade(_ request: HTTPRequest, channel: any Channel, logger: Logger) async throws
        -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
    {
        let path = request.path.map { $0.split(separator: "?", maxSplits: 1).first.map(String.init) ?? $0 }
        guard path == LiveEndpoint.path, request.headerFields[RooftopHeader.applicationId] == appId else {
            return .dontUpgrade
        }
        var token = request.headerFields[RooftopHeader.sessionToken]
        if token == nil, let authorization = request.headerFields[.authorization], authorization.hasPrefix("Bearer ") {
            token = String(authorization.dropFirst("Bearer ".count))
        }
        // A bad token or admin key is refused (the request then reaches the HTTP route, which
        // answers 401, or 429 once wrong admin keys are throttled), never taken as anonymous.
        let clientAddress = services.proxies.clientAddress(
            peer: channel.remoteAddress?.ipAddress, forwardedFor: request.headerFields[values: .xForwardedFor])
        let initial: AuthService.Authenticated
        do {
            initial = try await services.auth.authenticate(
                sessionToken: token, adminKey: request.headerFields[RooftopHeader.adminKey], clientAddress: clientAddress)
        } catch {
            if RooftopError.translating(error).httpStatus == .internalServerError {
                logger.error("live upgrade: authentication failed", metadata: ["error": "\(error)"])
            }
            return .dontUpgrade
        }
        let services = self.services
        // From here on the WebSocket's pings watch the connection, not the HTTP timeouts.
        await HTTPConnectionGuard.remove(from: channel)
        return .upgrade([:]) { inbound, outbound, context in
            try await LiveEndpoint.serve(
                inbound: inbound, outbound: outbound, initial: initial, services: services, logger: context.logger)
        }
    }

    private static func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, initial: AuthService.Authenticated,
        services: ServerServices, logger: Logger
    ) async throws {
        let id = UUID()
        let hub = services.live
        let messages = await hub.connect(id: id, context: initial.context, session: initial.session)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in messages {
                        try await outbound.write(.text(String(decoding: try encoder.encode(message), as: UTF8.self)))
                    }
                }
                var iterator = inbound.messages(maxSize: maxMessageBytes).makeAsyncIterator()
                while let message = try await iterator.next() {
                    guard case .text(let text) = message else {
                        await hub.send(id: id, .error(RooftopError(.request, "send JSON text messages"), datastore: nil))
                        continue
                    }
                    // The hub holds the connection's identity: a log-out or an expired session
                    // may have changed it since the last message.
                    guard let context = await hub.context(id: id) else { break }
                    await handle(text, id: id, context: context, services: services)
                }
                await hub.disconnect(id)
                group.cancelAll()
            }
        } onGracefulShutdown: {
            Task { await hub.disconnect(id) }
            Task { try? await outbound.close(.goingAway, reason: "server shutting down") }
        }
    }

    /// Handles one client message from a connection whose identity is `context`.
    private static func handle(_ text: String, id: UUID, context: AccessContext, services: ServerServices) async {
        let hub = services.live
        let message: LiveClientMessage
        do {
            message = try JSONDecoder().decode(LiveClientMessage.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            await hub.send(id: id, .error(RequestBody.describe(error), datastore: nil))
            return
        } catch {
            await hub.send(id: id, .error(RooftopError.translating(error), datastore: nil))
            return
        }
        switch message {
        case .unsubscribe(let datastores):
            await hub.unsubscribe(id: id, datastores: datastores)
            return
        case .subscribe(let datastores, let token):
            var context = context
            if let token {
                do {
                    let authenticated = try await services.auth.authenticate(sessionToken: token, adminKey: nil, clientAddress: nil)
                    context = authenticated.context
                    await hub.updateContext(id: id, context: context, session: .some(authenticated.session))
                } catch {
                    await hub.send(id: id, .error(RooftopError.translating(error), datastore: nil))
                    return
                }
            }
            // Bounded before any lookup: a message naming thousands of datastores costs nothing.
            var seen = Set<DatastoreID>()
            let requested = datastores.filter { seen.insert($0).inserted }
            let remaining = await hub.remainingSubscriptions(id: id)
            guard requested.count <= remaining else {
                let error = RooftopError(
                    .sizeLimit,
                    "a connection may be subscribed to at most \(LiveHub.maxSubscriptions) datastores; "
                        + "\(requested.count) more asked, \(max(remaining, 0)) left")
                await hub.send(id: id, .error(error, datastore: nil))
                return
            }
            var subscribed: [(key: Int64, id: DatastoreID)] = []
            var pending: [DatastoreID] = []
            for datastore in requested {
                do {
                    // Subscribing never creates a datastore. The caller's own private datastore
                    // that does not exist yet is subscribed when its first change creates it.
                    guard let resolved = try await services.datastores.resolveExisting(datastore, for: context) else {
                        guard datastore.kind == .private else { throw RooftopError(.notFound, "no datastore \(datastore)") }
                        pending.append(datastore)
                        continue
                    }
                    guard resolved.role.allows(.find) else {
                        throw RooftopError(.disallowed, "your role on datastore \(datastore) does not allow reading it")
                    }
                    subscribed.append((resolved.record.key, datastore))
                } catch {
                    await hub.send(id: id, .error(RooftopError.translating(error), datastore: datastore))
                }
            }
            await hub.subscribe(id: id, datastores: subscribed, pending: pending)
            await hub.send(id: id, .subscribed(datastores: subscribed.map(\.id) + pending))
            return
        }
    }
}
