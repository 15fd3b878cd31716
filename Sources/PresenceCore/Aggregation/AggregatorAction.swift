extension AggregatorCore {
    /// What the shell must do after an input.
    public enum Action: Sendable, Equatable {
        /// Make durable, then publish and store, in order.
        case record(OutboundRecord)
        /// Stream to the open venue pages (with `Configuration.page`).
        case page([PageUpdate])
        /// The counters: with `report`, publish (the shell adds its own) and log them; every
        /// time, bring the metrics up to date.
        case statistics(Statistics, report: Bool)
        /// Write a log line (already rate-limited where external input can trigger it).
        case log(LogLine)
        /// Store the node offsets self-calibration applies now (`SelfCalibration.Summary.applied`,
        /// with its fit), beside the journal and without waiting: they can be fitted again, so a
        /// write lost while the database is away costs nothing but staleness.
        case storeCalibration(SelfCalibration.Summary)
        /// Publish the fleet's health, retained, on `topic` (`FleetReport.encoded()`): the whole
        /// venue's on `{p}/v1/health`, or this aggregator's part on `{p}/v1/health/parts/{name}`.
        case health(FleetReport, topic: String)
        /// An input the core does not take where it is in its life (a mistake of the shell's, not
        /// the venue's): nothing changed.
        case refused(Refusal)
    }

    /// Why the core refused an input (`Action.refused`).
    public enum Refusal: Sendable, Equatable {
        /// A message or a tick before `resume(at:)`: it would be decided without the sessions waiting to resume.
        case notResumed
        /// `resume(at:)` once the core has resumed (or finished).
        case alreadyResumed
    }

    /// A log line, without a logging library: the shell writes it.
    public struct LogLine: Sendable, Equatable {
        public enum Level: Sendable, Equatable {
            case debug, info, notice, warning, error
        }

        public var level: Level
        public var message: String
        public var metadata: [String: String]

        public init(_ level: Level, _ message: String, _ metadata: [String: String] = [:]) {
            self.level = level
            self.message = message
            self.metadata = metadata
        }
    }

    /// The core's counters at one moment.
    public struct Statistics: Sendable, Equatable {
        public var counters: PipelineCounters
        public var strangers: StrangerNodes
        /// Observations applied after the engine had passed their time.
        public var late: Int
        /// How far behind the wall clock decisions are, ms (the watermark's lag included).
        public var decisionLag: Int64
        public var catchingUp: Bool
        /// The nodes' self-calibration, when it is on.
        public var calibration: SelfCalibration.Summary?
        /// Events decided since the start, by kind and exit reason.
        public var events: [EventTally: Int]
        /// Moves reversed within a minute since the start (`FlapCounter`).
        public var flaps: Int
        /// The registered nodes' rows, with `Configuration.page`.
        public var nodes: [NodeRow]
        /// How many people are at each registered beacon, the whole venue's (the others' users
        /// too while aggregators share it), with `Configuration.page`.
        public var present: [String: Int] = [:]
        /// How many people are in each zone, likewise.
        public var zonePresent: [String: Int] = [:]
        /// How many shards this aggregator decides for (nil: not sharing).
        public var ownedShards: Int?
        /// How many shards the venue has (`presencectl shards`), as the registry says.
        public var shards = 1

        public init(counters: PipelineCounters, strangers: StrangerNodes, late: Int, decisionLag: Int64, catchingUp: Bool,
                    calibration: SelfCalibration.Summary? = nil, events: [EventTally: Int] = [:], flaps: Int = 0, nodes: [NodeRow] = []) {
            self.counters = counters
            self.strangers = strangers
            self.late = late
            self.decisionLag = decisionLag
            self.catchingUp = catchingUp
            self.calibration = calibration
            self.events = events
            self.flaps = flaps
            self.nodes = nodes
        }
    }

    /// A kind of event, as the metrics count them.
    public struct EventTally: Sendable, Hashable {
        public var kind: PresenceEvent.Kind
        public var reason: PresenceEvent.ExitReason?
    }
}
