import Logging
import PresenceBLE
import PresenceCore
import ServiceLifecycle

/// A scanner node with a radio: reads an adapter's advertising reports, decodes them and
/// publishes batches, status and stats; on shutdown it turns the scan off, sends what is left
/// and marks the node offline.
public final class RadioScanner: Service {
    private let node: String
    private let configuration: ScannerConfiguration
    private let scan: HCIScanConfiguration
    private let options: AdvertisementDecoder.Options
    private let logger: Logger

    public init(node: String, configuration: ScannerConfiguration, scan: HCIScanConfiguration, options: AdvertisementDecoder.Options, logger: Logger) {
        self.node = node
        self.configuration = configuration
        self.scan = scan
        self.options = options
        self.logger = logger
    }

    public func run() async throws {
        let started = WallClock.milliseconds()
        let scanner = try HCIScanner(configuration: scan, logger: logger)
        let publisher = try NodePublisher(node: node, configuration: configuration, adapter: scan.adapter, started: started, logger: logger)
        try publisher.start()
        var reports = ReportBatcher(node: node, configuration: configuration, options: options)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await publisher.run()
            }
            group.addTask {
                try? await gracefulShutdown()
                scanner.stop()
            }
            var statsAt = started
            for await packet in scanner.packets {
                let now = WallClock.milliseconds()
                if !packet.bytes.isEmpty {
                    for batch in reports.take(event: packet.bytes[...], ts: packet.time, now: now) { publisher.submit(batch) }
                }
                if let batch = reports.due(at: now) { publisher.submit(batch) }
                if now - statsAt >= configuration.statsInterval {
                    let stats = reports.statistics(node: node, uptime: now - started, interval: now - statsAt)
                    statsAt = now
                    group.addTask {
                        await publisher.publishStats(stats)
                    }
                }
            }
            if let batch = reports.drain(at: WallClock.milliseconds()) { publisher.submit(batch) }
            publisher.finish()
            await group.waitForAll()
        }
        await publisher.stop()
    }
}
