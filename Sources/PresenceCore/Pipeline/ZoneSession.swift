/// A user's open stay in a zone: what a restarted aggregator resumes, and what the database keeps
/// open until the zone's exit.
public struct ZoneSession: Sendable, Equatable {
    public var user: String
    public var zone: String
    /// The device whose beacon enter brought the zone's about.
    public var device: String
    public var venue: String?
    /// When the user entered the zone, ms since the epoch.
    public var entered: Int64

    public init(user: String, zone: String, device: String, venue: String?, entered: Int64) {
        self.user = user
        self.zone = zone
        self.device = device
        self.venue = venue
        self.entered = entered
    }
}
