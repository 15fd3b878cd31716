/// When each record of a btsnoop capture being replayed is due, and the time its sightings carry.
/// At a speed factor, records are due as they were captured, their gaps divided by the factor, the
/// first one at the replay's start; as fast as possible, each is due at once. Sightings are dated
/// when their record is due (as fast as possible: when it is handed on), unless `keepTime` keeps
/// the capture's own clock. Pure: the replay's start and the records' capture times go in.
public struct CapturePacing: Sendable {
    /// How fast to replay.
    public enum Speed: Sendable, Equatable {
        /// Gaps divided by this factor (above 0): 1 as captured, 2 twice as fast.
        case factor(Double)
        case asFastAsPossible
    }

    /// A record's place in time.
    public struct Timing: Sendable, Equatable {
        /// When it is due, ms since the epoch; nil: at once.
        public var due: Int64?
        /// The time its sightings carry, ms since the epoch; nil: the moment it is handed on.
        public var ts: Int64?

        public init(due: Int64?, ts: Int64?) {
            self.due = due
            self.ts = ts
        }
    }

    public let speed: Speed
    public let keepTime: Bool
    /// When the replay started, ms since the epoch.
    public let started: Int64
    /// The first record's capture time, ms since the epoch.
    private var origin: Int64?

    public init(speed: Speed, keepTime: Bool, started: Int64) {
        self.speed = speed
        self.keepTime = keepTime
        self.started = started
    }

    /// The timing of the next record, captured at `captured` (ms since the epoch).
    public mutating func timing(capturedAt captured: Int64) -> Timing {
        let origin = self.origin ?? captured
        self.origin = origin
        let due: Int64? = switch speed {
        case .factor(let factor): started + Int64(Double(captured - origin) / factor)
        case .asFastAsPossible: nil
        }
        return Timing(due: due, ts: keepTime ? captured : due)
    }
}
