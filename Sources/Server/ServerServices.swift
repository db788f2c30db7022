import Crypto
import Logging
import Metrics
import Prometheus
import RooftopShared

/// The server's components, built once at start-up and shared by all requests.
struct ServerServices: Sendable {
    let storage: any Storage
    let limits: Limits
    let auth: AuthService
    let roles: RoleDirectory
    let roleService: RoleService
    let classes: ClassDirectory
    let datastores: DatastoreService
    let objects: ObjectService
    let queries: QueryService
    let push: PushService
    let pull: PullService
    let live: LiveHub
    let metrics: PrometheusCollectorRegistry
    /// The other server processes sharing the database, if any.
    let cluster: ClusterLink
    /// Pushes and pulls per minute, for the dashboard.
    let activity: ActivityMeter
    /// The proxies whose `X-Forwarded-For` names the client address.
    let proxies: TrustedProxies

    static func make(
        storage: any Storage, configuration: ServerConfiguration, adminKeyHash: String,
        logger: Logger = Logger(label: "rooftop-server")
    ) async throws -> ServerServices {
        let cluster = ClusterLink(storage: storage, logger: logger)
        let roles = RoleDirectory(storage: storage)
        let classes = ClassDirectory(storage: storage, cluster: cluster)
        let datastores = DatastoreService(
            storage: storage, limits: configuration.limits, maxPerUser: configuration.maxDatastoresPerUser)
        let live = LiveHub(clock: configuration.clock)
        let secret = try await storage.secret(named: "checkpoint-hmac-key") {
            var generator = SystemRandomNumberGenerator()
            return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        let objects = ObjectService(
            storage: storage, datastores: datastores, classes: classes, live: live, limits: configuration.limits,
            clock: configuration.clock)
        return ServerServices(
            storage: storage,
            limits: configuration.limits,
            auth: AuthService(
                storage: storage, roles: roles, live: live, configuration: configuration, adminKeyHash: adminKeyHash,
                cluster: cluster),
            roles: roles,
            roleService: RoleService(storage: storage, roles: roles, classes: classes, live: live, cluster: cluster),
            classes: classes,
            datastores: datastores,
            objects: objects,
            queries: QueryService(
                storage: storage, datastores: datastores, classes: classes, objects: objects, limits: configuration.limits),
            push: PushService(objects: objects, limits: configuration.limits),
            pull: PullService(
                storage: storage, datastores: datastores, classes: classes, checkpoints: CheckpointCodec(secret: secret),
                limits: configuration.limits),
            live: live,
            metrics: ServerMetrics.registry,
            cluster: cluster,
            activity: ActivityMeter(clock: configuration.clock),
            proxies: try TrustedProxies(configuration.trustedProxies))
    }
}

/// The process-wide Prometheus registry behind swift-metrics.
enum ServerMetrics {
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()
}
