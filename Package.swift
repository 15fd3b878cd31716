// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let log = Target.Dependency.product(name: "Logging", package: "swift-log")
let lifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let signals = Target.Dependency.product(name: "UnixSignals", package: "swift-service-lifecycle")
let arguments = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let histogram = Target.Dependency.product(name: "Histogram", package: "hdrhistogram-swift")
let collections = Target.Dependency.product(name: "Collections", package: "swift-collections")
let deque = Target.Dependency.product(name: "DequeModule", package: "swift-collections")
let metrics = Target.Dependency.product(name: "Metrics", package: "swift-metrics")
let csv = Target.Dependency.product(name: "CSV", package: "CSV.swift")
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")

let package = Package(
    name: "presence",
    products: [
        .executable(name: "presence-scanner", targets: ["presence-scanner"]),
        .executable(name: "presence-aggregator", targets: ["presence-aggregator"]),
        .executable(name: "presencectl", targets: ["presencectl"]),
        .executable(name: "presence-bench", targets: ["presence-bench"]),
        .executable(name: "presence-fuzz", targets: ["presence-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/yaslab/CSV.swift", from: "2.5.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),

        .target(name: "PresenceCore", dependencies: [deque], swiftSettings: strict),
        .target(name: "PresenceMQTT", dependencies: ["CMosquitto", "PresenceCore", log, lifecycle, nioCore, nioPosix, nioSSL], swiftSettings: strict),
        .target(name: "PresencePostgres", dependencies: ["CLibPQ", "PresenceCore", log, lifecycle], swiftSettings: strict),
        .target(name: "PresenceBLE", dependencies: ["CBlueZ", "PresenceCore", log], swiftSettings: strict),
        .target(
            name: "PresenceStore",
            dependencies: ["PresenceCore", "PresencePostgres", log],
            resources: [.embedInCode("Migrations")],
            swiftSettings: strict),
        // The aggregator's web face: the live venue page, its JSON and event stream, /metrics and
        // the health probes. Fed by the aggregator, it knows nothing of MQTT or PostgreSQL.
        .target(
            name: "PresenceHTTP",
            dependencies: [
                "PresenceCore", collections, log, lifecycle, metrics,
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            resources: [.embedInCode("Page")],
            swiftSettings: strict),
        .target(
            name: "PresenceAggregator",
            dependencies: ["PresenceCore", "PresenceMQTT", "PresenceStore", "PresenceHTTP", log, lifecycle, histogram, metrics],
            swiftSettings: strict),
        .target(
            name: "PresenceCLI",
            dependencies: ["PresenceCore", "PresenceMQTT", arguments, log, csv],
            swiftSettings: strict),
        // The database flag apart from PresenceCLI, so that presence-scanner does not link libpq.
        .target(
            name: "PresenceDatabaseCLI",
            dependencies: ["PresenceCLI", "PresenceCore", "PresenceMQTT", "PresencePostgres", "PresenceStore", arguments],
            swiftSettings: strict),
        .target(
            name: "PresenceScanner",
            dependencies: ["PresenceCore", "PresenceMQTT", "PresenceBLE", collections, log, lifecycle],
            swiftSettings: strict),

        .executableTarget(
            name: "presence-scanner",
            dependencies: ["PresenceScanner", "PresenceCLI", "PresenceCore", "PresenceMQTT", arguments, log, lifecycle, signals],
            swiftSettings: strict),
        .executableTarget(
            name: "presence-aggregator",
            dependencies: ["PresenceAggregator", "PresenceCLI", "PresenceDatabaseCLI", "PresenceCore", "PresenceHTTP", "PresenceMQTT", "PresencePostgres", arguments, log, lifecycle, signals],
            swiftSettings: strict),
        .executableTarget(
            name: "presencectl",
            dependencies: [
                "PresenceStore", "PresenceCLI", "PresenceDatabaseCLI", "PresenceMQTT", "PresencePostgres", "PresenceCore", arguments, log, lifecycle,
                signals, .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "presence-bench", dependencies: ["PresenceAggregator", "PresenceCore", "PresenceMQTT", "PresencePostgres", "PresenceStore", log],
            path: "Benchmarks", swiftSettings: strict),
        // libFuzzer target over the frame parsers; scripts/fuzz.sh builds it with -sanitize=fuzzer,address.
        .executableTarget(name: "presence-fuzz", dependencies: ["PresenceCore"], path: "Fuzz", swiftSettings: strict),

        // Readers of the project's output formats that the tests share, written apart from the code under test.
        .target(name: "PresenceTestSupport", path: "Tests/PresenceTestSupport", swiftSettings: strict),
        // One unit-test target per library, run without servers; IntegrationTests runs the real ones.
        .testTarget(name: "PresenceCoreTests", dependencies: ["PresenceCore"], swiftSettings: strict),
        .testTarget(name: "PresenceMQTTTests", dependencies: ["PresenceMQTT", "PresenceCore", nioCore], swiftSettings: strict),
        .testTarget(name: "PresencePostgresTests", dependencies: ["PresencePostgres"], swiftSettings: strict),
        .testTarget(name: "PresenceStoreTests", dependencies: ["PresenceStore", "PresenceCore", "PresencePostgres"], swiftSettings: strict),
        .testTarget(name: "PresenceHTTPTests", dependencies: ["PresenceHTTP", "PresenceCore"], swiftSettings: strict),
        // Pure tests of the BlueZ adapter (command layouts, configuration); nothing here opens a socket.
        .testTarget(name: "PresenceBLETests", dependencies: ["PresenceBLE", "CBlueZ", "PresenceCore"], swiftSettings: strict),
        // The scanner's spool on a real file system; no radio, no broker.
        .testTarget(name: "PresenceScannerTests", dependencies: ["PresenceScanner"], swiftSettings: strict),
        .testTarget(name: "PresenceCLITests", dependencies: ["PresenceCLI", "PresenceCore", "PresenceTestSupport", arguments], swiftSettings: strict),
        // The aggregator's parts on a real file system (the journal), without servers.
        .testTarget(name: "PresenceAggregatorTests", dependencies: ["PresenceAggregator", "PresenceCore", log, lifecycle], swiftSettings: strict),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "PresenceTestSupport", "PresenceCore", "PresenceMQTT", "PresencePostgres", "PresenceStore", "PresenceCLI", "PresenceAggregator", arguments, log,
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict),
    ]
)
