extension FleetHealth {
    /// What is wrong at `now` (ms), and everything watched. Beacons are silent when not heard for
    /// longer than `silentAfter` (counting from the start, or from their registration, when never
    /// heard: a fixed beacon is expected to send). Tags are silent only once heard since the start:
    /// a tag nobody brought says nothing about its battery. Fixed nodes are down when their status
    /// says offline or nothing came from them for longer than `nodeDownAfter`; carried nodes go
    /// home with their user, so they are listed but never down. A node heard recently whose clock
    /// is off by more than `maxSkew` is skewed.
    public func report(at now: Int64) -> FleetReport {
        var report = FleetReport(at: now, thresholds: configuration.thresholds)
        for (key, index) in beacons {
            let radio = radios[index]
            report.beacons.append(FleetReport.Beacon(key: key, identity: radio.identity, radio: radio.reported))
            check(radio, .beacon(key), silentSince: radio.lastHeard ?? radio.since, at: now, into: &report.problems)
        }
        for index in tags where !radios[index].isIncognito(at: now) {
            let radio = radios[index]
            report.tags.append(FleetReport.Tag(identity: radio.identity, radio: radio.reported))
            check(radio, .tag(radio.identity), silentSince: radio.lastHeard, at: now, into: &report.problems)
        }
        for (key, entry) in nodes.sorted(by: { $0.key < $1.key }) where !entry.isIncognito(at: now) {
            let node = self.node(key, entry, at: now)
            report.nodes.append(node)
            if !node.carried, node.state == .offline || node.state == .silent {
                report.problems.append(FleetReport.Problem(kind: .nodeDown, subject: .node(key), lastHeard: node.lastHeard, state: node.state))
            }
            if node.state == .online, let skew = node.skew, skew.magnitude > configuration.maxSkew.magnitude {
                report.problems.append(FleetReport.Problem(kind: .nodeSkewed, subject: .node(key), skew: skew))
            }
        }
        report.problems.sort { ($0.kind, $0.subject) < ($1.kind, $1.subject) }
        return report
    }

    /// Low battery and silence of one radio as `subject`; `silentSince` nil: never silent.
    private func check(_ radio: Radio, _ subject: FleetReport.Problem.Subject, silentSince: Int64?, at now: Int64,
                       into problems: inout [FleetReport.Problem]) {
        if radio.lowBattery {
            problems.append(FleetReport.Problem(kind: .lowBattery, subject: subject, batteryMillivolts: radio.batteryMillivolts))
        }
        if let silentSince, TimeBounds.difference(now, silentSince) > configuration.silentAfter {
            problems.append(FleetReport.Problem(kind: .silent, subject: subject, lastHeard: radio.lastHeard))
        }
    }

    private func node(_ key: String, _ entry: NodeEntry, at now: Int64) -> FleetReport.Node {
        let quiet = TimeBounds.difference(now, entry.lastHeard ?? entry.since) > configuration.nodeDownAfter
        let state: FleetReport.Node.State = entry.offline ? .offline : quiet ? .silent : entry.lastHeard == nil ? .unknown : .online
        return FleetReport.Node(key: key, state: state, carried: entry.carried, lastHeard: entry.lastHeard, lastBatch: entry.lastBatch,
                                sightingsPerSecond: sightingsPerSecond(entry, at: now), reportsPerSecond: entry.reportsPerSecond,
                                skew: entry.clockOffset.map { TimeBounds.difference(0, $0) })
    }
}

extension FleetHealth {
    /// Over the last whole window while batches come, over the window so far before one has
    /// passed (once it spans a second), and 0 once they stopped for two windows.
    private func sightingsPerSecond(_ entry: NodeEntry, at now: Int64) -> Double {
        guard let lastBatch = entry.lastBatch, TimeBounds.difference(now, lastBatch) <= 2 * configuration.rateWindow else { return 0 }
        if let rate = entry.sightingsPerSecond { return rate }
        guard let start = entry.windowStart, TimeBounds.difference(now, start) >= 1_000 else { return 0 }
        return Double(entry.windowSightings) * 1000 / Double(TimeBounds.difference(now, start))
    }
}

extension FleetHealth.Radio {
    var reported: FleetReport.Radio {
        FleetReport.Radio(lastHeard: lastHeard, batteryMillivolts: batteryMillivolts, batteryAt: batteryAt, temperature: temperature, uptime: uptime)
    }
}
