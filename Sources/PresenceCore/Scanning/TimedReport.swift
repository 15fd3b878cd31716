/// What a scanner node's source hands on, one moment at a time: what its nodes heard then. After
/// each report, the batches that have waited long enough close.
public enum TimedReport: Sendable, Equatable {
    /// An HCI event packet (event code, length, parameters) that `node`'s adapter heard at `ts`,
    /// ms since the epoch; its advertising reports become sightings dated `ts`.
    case hciEvent(ArraySlice<UInt8>, ts: Int64, node: String)
    /// Sightings already decoded, each with the node that heard it (the simulator's step: possibly
    /// none); each is dated by its own `ts`.
    case sightings([VenueSimulator.Heard])
    /// Nothing heard for a while (an adapter's quiet 100 ms).
    case tick
}
