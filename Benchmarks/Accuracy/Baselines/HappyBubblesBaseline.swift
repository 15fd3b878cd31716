import PresenceCore

/// Happy Bubbles' presence server (github.com/happy-bubbles/presence, main.go,
/// `getLikelyLocations`), applied per user with each sighting's beacon as the "location" (its
/// node's beacon, or the beacon a carried scanner heard):
/// - the last 30 sightings (`beacon_metrics_size`) each add 1.5 + 0.75 × (1 − rssi / −100) to
///   their beacon's score, and the best score is the tick's winner;
/// - every 1 s tick, a winner equal to the last tick's raises a confidence count, any other resets
///   it to 0; when the count reaches 8 (`location_confidence`) and the winner is not the confirmed
///   location, the winner is confirmed (the server publishes a change) and the count restarts;
/// - a user whose last sighting is more than 45 s old (`last_seen_threshold`) is nowhere, and the
///   count is left alone meanwhile.
/// The output is the confirmed location. Two departures: ties go to the smaller beacon key (Go's
/// map order is random), and the 30 empty slots the server starts each beacon's list with (which
/// vote for location "" until pushed out) are left out.
struct HappyBubblesBaseline: TickedBaseline {
    static let name = "happy-bubbles"
    static let tick: Int64 = 1_000
    static let sightings = 30
    static let confidence = 8
    static let lastSeenThreshold: Int64 = 45_000

    /// One sighting's say: its beacon and how strong it was.
    private struct Vote: Sendable {
        var beacon: String
        var rssi: Double
    }

    private var votes: [Vote] = []
    private(set) var lastHeard: Int64?
    private(set) var leader: String?
    private var previous: String?
    private var count = 0
    private var confirmed: String?

    mutating func observe(_ observation: Observation) {
        votes.append(Vote(beacon: observation.beacon, rssi: observation.rssi))
        if votes.count > Self.sightings { votes.removeFirst(votes.count - Self.sightings) }
        lastHeard = observation.time
    }

    mutating func decide(at time: Int64) -> String? {
        guard let lastHeard, time - lastHeard <= Self.lastSeenThreshold else {
            leader = nil
            return nil
        }
        var scores: [String: Double] = [:]
        for vote in votes {
            scores[vote.beacon, default: 0] += 1.5 + 0.75 * (1 - vote.rssi / -100)
        }
        leader = scores.strongest()?.beacon
        guard let winner = leader else { return confirmed }
        count = winner == previous ? count + 1 : 0
        if count == Self.confidence, winner != confirmed {
            confirmed = winner
            count = 0
        }
        previous = winner
        return confirmed
    }
}
