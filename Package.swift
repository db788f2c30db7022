// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Tests import whole stacks (NIO, AsyncHTTPClient): member-import checks would only add noise.
let testSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Rooftop",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "RooftopShared", targets: ["RooftopShared"]),
        .library(name: "Rooftop", targets: ["Rooftop"]),
        .library(name: "RooftopServer", targets: ["RooftopServer"]),
        .executable(name: "rooftop-server", targets: ["rooftop-server"]),
        .executable(name: "rooftop-benchmark", targets: ["rooftop-benchmark"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // `swift package generate-documentation`: the DocC catalogs of Rooftop and RooftopShared.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The admin dashboard's server-rendered pages.
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
    ],
    targets: [
        // The shared model: values, objects, rules, queries, errors, wire protocol. No I/O.
        .target(
            name: "RooftopShared",
            path: "Sources/Shared",
            swiftSettings: swiftSettings
        ),
        // The query compiler and index layout the client's local store and the server's storage
        // share: SQL text and arguments from the shared query model. No I/O; GRDB and
        // postgres-nio stay with the stores.
        .target(
            name: "RooftopSQL",
            dependencies: ["RooftopShared"],
            path: "Sources/SQL",
            swiftSettings: swiftSettings
        ),
        // What the client's local store and the server's SQLite storage share on top of GRDB.
        .target(
            name: "RooftopSQLite",
            dependencies: [
                "RooftopShared", "RooftopSQL", .product(name: "GRDB", package: "GRDB.swift"),
                // The C API, for statements bound without GRDB's boxing (`DirectStatement`).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/SQLite",
            swiftSettings: swiftSettings
        ),
        // The client library apps embed.
        .target(
            name: "Rooftop",
            dependencies: [
                "RooftopShared",
                "RooftopSQL",
                "RooftopSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Client",
            swiftSettings: swiftSettings
        ),
        // The reference server as a library.
        .target(
            name: "RooftopServer",
            dependencies: [
                "RooftopShared",
                "RooftopSQL",
                "RooftopSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            path: "Sources/Server",
            // The OpenAPI document's components are compiled into the binary (no resource bundle to
            // ship or find at run time); OpenAPIDocument adds the paths of RooftopShared's `API`.
            resources: [.embedInCode("OpenAPI/openapi-components.yaml")],
            swiftSettings: swiftSettings
        ),
        // The Swift runtime's global-executor hook, named for the linker (`TaskThreads`).
        .target(name: "RooftopExecutorHook", path: "Sources/ExecutorHook"),
        .executableTarget(
            name: "rooftop-server",
            dependencies: [
                "RooftopServer",
                "RooftopShared",
                "RooftopExecutorHook",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // `rooftop-server admin` talks to a running server over HTTPS.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/rooftop-server",
            swiftSettings: swiftSettings
        ),
        // Benchmarks that print figures (push, pull, queries, memory); never timed assertions.
        .executableTarget(
            name: "rooftop-benchmark",
            dependencies: [
                "Rooftop",
                "RooftopServer",
                "RooftopShared",
                "RooftopSQLite",
                "RooftopLauncher",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/rooftop-benchmark",
            swiftSettings: swiftSettings
        ),
        // The one launcher of a built rooftop-server as its own process (posix_spawn, output on
        // threads of their own, waits with deadlines), for the benchmark and the end-to-end tests.
        .target(
            name: "RooftopLauncher",
            path: "Sources/Launcher",
            swiftSettings: swiftSettings
        ),
        // Test helpers shared by every test target (ports, sockets, stream recording, deadline waits,
        // seeded randomness and the one random-value generator, property-check error recording, the
        // fault-injecting proxy, the PostgreSQL test cluster).
        .target(
            name: "RooftopTestSupport",
            dependencies: [
                "RooftopShared",
                "RooftopLauncher",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: testSwiftSettings
        ),
        // The randomized convergence harness's replica, shared by the end-to-end tests (replicas
        // in the test process) and rooftop-chaos-client (replicas in their own processes).
        .target(
            name: "RooftopChaos",
            dependencies: ["Rooftop", "RooftopShared"],
            path: "Tests/Chaos",
            swiftSettings: testSwiftSettings
        ),
        // One replica in its own process, driven over standard input and output; killed and
        // reopened on its cache file by the convergence harness.
        .executableTarget(
            name: "rooftop-chaos-client",
            dependencies: ["RooftopChaos"],
            path: "Tests/ChaosClient",
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "SharedTests",
            dependencies: [
                "RooftopShared",
                "RooftopTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/SharedTests",
            swiftSettings: swiftSettings
        ),
        // The client library: what pushes or pulls against the real rooftop-server behind a scripted
        // network, the rest over fakes; injected clocks.
        .testTarget(
            name: "ClientTests",
            dependencies: [
                "Rooftop",
                "RooftopTestSupport",
                "RooftopShared",
                "RooftopSQL",
                "RooftopSQLite",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/ClientTests",
            swiftSettings: testSwiftSettings
        ),
        // End-to-end: the real rooftop-server process over TLS, driven through HTTP and WebSocket.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "Rooftop",
                "RooftopTestSupport",
                "RooftopChaos",
                "RooftopShared",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/EndToEndTests",
            swiftSettings: testSwiftSettings
        ),
        // The client library used as an app uses it: only the products an app depends on (and the
        // tests' deadline-bounded wait), Swift 6 defaults, and every warning an error, so the
        // documented error-handling shapes (and Swift values, observation) keep compiling cleanly.
        .testTarget(
            name: "AppUsageTests",
            dependencies: ["Rooftop", "RooftopShared", "RooftopTestSupport"],
            path: "Tests/AppUsageTests",
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
        ),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "RooftopServer",
                "RooftopShared",
                "RooftopSQL",
                "RooftopTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ServerTests",
            swiftSettings: testSwiftSettings
        ),
    ]
)
