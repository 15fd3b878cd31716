import PresenceCore

/// One user's readings per link (node, beacon) within a sliding window, with running sums so that
/// each link's mean RSSI is cheap to read. A beacon's figure is the mean of its best link: with
/// one node per beacon that is simply the beacon's mean; with several (TETAM's zones) it is the
/// strongest node's.
struct LinkWindow: Sendable {
    /// A node hearing the user, and the beacon it stands for.
    private struct Link: Hashable, Sendable {
        var node: String
        var beacon: String
    }

    /// One observation, as much of it as the window needs.
    private struct Reading: Sendable {
        var time: Int64
        var link: Link
        var rssi: Double
    }

    /// A link's readings in the window, added up.
    private struct Sum: Sendable {
        var total = 0.0
        var count = 0
    }

    /// Readings newer than `time - span` are in the window at `time`.
    let span: Int64
    private var readings: [Reading] = []
    private var head = 0
    private var sums: [Link: Sum] = [:]

    init(span: Int64) {
        self.span = span
    }

    mutating func add(_ observation: Observation) {
        let link = Link(node: observation.node, beacon: observation.beacon)
        readings.append(Reading(time: observation.time, link: link, rssi: observation.rssi))
        sums[link, default: Sum()].total += observation.rssi
        sums[link, default: Sum()].count += 1
    }

    /// Drops the readings that are no longer in the window at `time`.
    mutating func slide(to time: Int64) {
        while head < readings.count, readings[head].time <= time - span {
            let reading = readings[head]
            head += 1
            guard var sum = sums[reading.link] else { continue }
            sum.total -= reading.rssi
            sum.count -= 1
            sums[reading.link] = sum.count > 0 ? sum : nil
        }
        if head > 4_096, head * 2 > readings.count {
            readings.removeFirst(head)
            head = 0
        }
    }

    /// Each heard beacon's mean RSSI (its best link's), dBm.
    func beaconMeans() -> [String: Double] {
        var means: [String: Double] = [:]
        for (link, sum) in sums {
            let mean = sum.total / Double(sum.count)
            if let existing = means[link.beacon], existing >= mean { continue }
            means[link.beacon] = mean
        }
        return means
    }
}
