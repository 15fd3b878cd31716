import Logging
import PresenceCore
import ServiceLifecycle

/// The reports of a node replaying a btsnoop capture instead of a radio: the capture's HCI
/// events, paced and dated by `CapturePacing` from the moment the replay starts. Ends at the end
/// of the capture or, at once, on graceful shutdown.
public struct CaptureReports: ReportSource {
    public let nodes: [String]
    public let adapter: String
    public let form: ReportForm
    private let reader: BTSnoopReader
    private let speed: CapturePacing.Speed
    private let keepTime: Bool
    private let logger: Logger

    /// `capture` is the file's bytes, `name` its name for the node's status; an invalid header is
    /// refused here.
    public init(node: String, capture: [UInt8], name: String, speed: CapturePacing.Speed, keepTime: Bool,
                options: AdvertisementDecoder.Options, logger: Logger) throws {
        nodes = [node]
        adapter = "btsnoop:\(name)"
        form = .hciEvents(options)
        reader = try BTSnoopReader(capture)
        self.speed = speed
        self.keepTime = keepTime
        self.logger = logger
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(node: nodes[0], reader: reader, pacing: CapturePacing(speed: speed, keepTime: keepTime, started: WallClock.milliseconds()),
                 logger: logger)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let node: String
        var reader: BTSnoopReader
        var pacing: CapturePacing
        let logger: Logger
        var events = 0
        var ended = false

        public mutating func next() async -> TimedReport? {
            guard !ended else { return nil }
            guard !Task.isShuttingDownGracefully, let event = reader.nextHCIEvent() else { return end() }
            let timing = pacing.timing(capturedAt: event.unixMicroseconds / 1000)
            // Sleep only for gaps worth it: records a few ms apart go out together. A long gap is
            // slept 100 ms at a time, so that a graceful shutdown is not kept waiting.
            while let due = timing.due {
                let wait = due - WallClock.milliseconds()
                guard wait >= 10 else { break }
                guard !Task.isShuttingDownGracefully, (try? await Task.sleep(for: .milliseconds(Swift.min(wait, 100)))) != nil else { return end() }
            }
            events += 1
            return .hciEvent(event.packet, ts: timing.ts ?? WallClock.milliseconds(), node: node)
        }

        private mutating func end() -> TimedReport? {
            ended = true
            if let truncation = reader.truncation {
                logger.warning("the capture ends with a truncated record", metadata: ["detail": "\(truncation)"])
            }
            logger.notice("capture replayed", metadata: ["events": "\(events)"])
            return nil
        }
    }
}
