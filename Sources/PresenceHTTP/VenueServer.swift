import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// The aggregator's HTTP face (`--http ADDR:PORT`): the live venue page at `/`, its JSON under
/// `/api`, its event stream at `/api/stream`, Prometheus text at `/metrics`, and the probes
/// `/healthz` (alive) and `/readyz` (broker and database reachable, registry loaded).
public struct VenueServer: Service {
    /// Where the server's answers come from.
    public struct Sources: Sendable {
        /// The open pages' streams.
        public var feed: LiveFeed
        public var metrics: PrometheusCollectorRegistry
        /// What `/readyz` checks, each by name, with why one fails.
        public var readiness: @Sendable () -> [ReadinessCheck]
        /// Asks whoever holds what the page shows (the aggregator's core, on its loop); nil when it
        /// cannot answer now (starting, stopping, or too busy).
        public var page: @Sendable (PageQuestion) async -> PageAnswer?
        /// Unique visitors per beacon per bucket since a time (ms), for the visits chart.
        public var visits: @Sendable (_ since: Int64) async throws -> [VisitCount]
        /// Called before `/metrics` is written, to bring gauges up to date.
        public var beforeScrape: @Sendable () -> Void
        public var now: @Sendable () -> Int64

        public init(feed: LiveFeed, metrics: PrometheusCollectorRegistry, readiness: @escaping @Sendable () -> [ReadinessCheck],
                    page: @escaping @Sendable (PageQuestion) async -> PageAnswer?, visits: @escaping @Sendable (Int64) async throws -> [VisitCount],
                    beforeScrape: @escaping @Sendable () -> Void = {}, now: @escaping @Sendable () -> Int64) {
            self.feed = feed
            self.metrics = metrics
            self.readiness = readiness
            self.page = page
            self.visits = visits
            self.beforeScrape = beforeScrape
            self.now = now
        }
    }

    /// What a route asks of the page's holder.
    public enum PageQuestion: Sendable, Equatable {
        case snapshot(at: Int64)
        case presence(at: Int64)
        case events(after: Int64, limit: Int)
        case nodes
        /// A stream for a new page, attached to `Sources.feed` with its snapshot.
        case stream(at: Int64)
    }

    /// The answer: JSON, or a page's stream.
    public enum PageAnswer: Sendable {
        case json([UInt8])
        case stream(AsyncStream<[UInt8]>)
    }

    private let host: String
    private let port: Int
    private let sources: Sources
    private let logger: Logger

    public init(host: String, port: Int, sources: Sources, logger: Logger) {
        self.host = host
        self.port = port
        self.sources = sources
        self.logger = logger
    }

    public func run() async throws {
        let feed = sources.feed
        let app = Application(
            router: VenueRoutes.router(sources),
            configuration: .init(address: .hostname(host, port: port), serverName: "presence-aggregator"),
            onServerRunning: { [logger] channel in
                logger.notice("http listening", metadata: ["address": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
            },
            logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Comments on idle streams keep proxies from closing them and find gone pages.
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(15))
                    feed.keepAlive()
                }
            }
            group.addTask {
                try await withGracefulShutdownHandler {
                    try await app.run()
                } onGracefulShutdown: {
                    // Open streams would hold the server's graceful shutdown for ever.
                    feed.stopAll()
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
