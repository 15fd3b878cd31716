import Logging
import PresenceCore
import ServiceLifecycle

/// A scanner node replaying a btsnoop capture instead of a radio: the capture's HCI events go
/// through the same decoder, batcher and publisher. Records are paced as captured (or `speed`
/// times faster, their timestamps compressed alike, the first one being "now"), or sent as fast as
/// possible (dated when sent), unless `keepTime` keeps the capture's own clock. It ends once every
/// batch has been published and acknowledged.
public final class CaptureReplayer: Service {
    private let node: String
    private let configuration: ScannerConfiguration
    private let capture: [UInt8]
    private let source: String
    private let speed: CapturePacing.Speed
    private let keepTime: Bool
    private let options: AdvertisementDecoder.Options
    private let logger: Logger

    /// `capture` is the file's bytes; `source` names it in the node's status.
    public init(node: String, configuration: ScannerConfiguration, capture: [UInt8], source: String, speed: CapturePacing.Speed, keepTime: Bool,
                options: AdvertisementDecoder.Options, logger: Logger) throws {
        _ = try BTSnoopReader(capture)
        self.node = node
        self.configuration = configuration
        self.capture = capture
        self.source = source
        self.speed = speed
        self.keepTime = keepTime
        self.options = options
        self.logger = logger
    }

    public func run() async throws {
        let started = WallClock.milliseconds()
        var reader = try BTSnoopReader(capture)
        let publisher = try NodePublisher(node: node, configuration: configuration, adapter: "btsnoop:\(source)", started: started, logger: logger)
        try publisher.start()
        var reports = ReportBatcher(node: node, configuration: configuration, options: options)
        var events = 0
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await publisher.run()
            }
            var pacing = CapturePacing(speed: speed, keepTime: keepTime, started: started)
            var statsAt = started
            while !Task.isCancelledOrShuttingDown, let event = reader.nextHCIEvent() {
                let timing = pacing.timing(capturedAt: event.unixMicroseconds / 1000)
                // Sleep only for gaps worth it: records a few ms apart go out together.
                if let wait = timing.due.map({ $0 - WallClock.milliseconds() }), wait >= 10 {
                    do {
                        try await Task.sleep(for: .milliseconds(wait))
                    } catch {
                        break
                    }
                }
                let now = WallClock.milliseconds()
                let ts = timing.ts ?? now
                events += 1
                for batch in reports.take(event: event.packet, ts: ts, now: now) { publisher.submit(batch) }
                if let batch = reports.due(at: now) { publisher.submit(batch) }
                if now - statsAt >= configuration.statsInterval {
                    let stats = reports.statistics(node: node, uptime: now - started, interval: now - statsAt)
                    statsAt = now
                    group.addTask {
                        await publisher.publishStats(stats)
                    }
                }
            }
            if let truncation = reader.truncation {
                logger.warning("the capture ends with a truncated record", metadata: ["detail": "\(truncation)"])
            }
            let now = WallClock.milliseconds()
            if let batch = reports.drain(at: now) { publisher.submit(batch) }
            await publisher.publishStats(reports.statistics(node: node, uptime: now - started, interval: max(1, now - statsAt)))
            publisher.finish()
            await group.waitForAll()
        }
        logger.notice("capture replayed", metadata: ["events": "\(events)", "sightings": "\(reports.sightingCount)",
                                                    "published": "\(publisher.counters.published)", "dropped": "\(reports.decoder.statistics.dropped)"])
        await publisher.stop()
    }
}
