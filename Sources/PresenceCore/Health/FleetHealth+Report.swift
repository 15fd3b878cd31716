extension FleetHealth {
    /// What is wrong at `now` (ms), and everything watched. Beacons are silent when not heard for
    /// longer than `silentAfter` (counting from the start, or from their registration, when never
    /// heard: a fixed beacon is expected to send). Tags are silent only once heard since the start:
    /// a tag nobody brought says nothing about its battery. Fixed nodes are down when their status
    /// says offline or nothing came from them for longer than `nodeDownAfter`; carried nodes go
    /// home with their user, so they are listed but never down. A node heard recently whose clock
    /// is off by more than `maxSkew` is skewed. Sharing the venue, the others' parts count too.
    public func report(at now: Int64) -> FleetReport {
        report(at: now, radios: { _ in true }, merging: liveParts(at: now))
    }

    /// Every node's figures at `now` (`report(at:)`'s nodes, without the radios).
    public func nodeReports(at now: Int64) -> [FleetReport.Node] {
        let parts = liveParts(at: now)
        return nodes.sorted(by: { $0.key < $1.key }).filter { !$0.value.isIncognito(at: now) }.map { node($0.key, $0.value, at: now, merging: parts) }
    }

    /// The report of the radios `listed` says, with nodes' figures from this aggregator's batches and `parts`'.
    func report(at now: Int64, radios listed: (String) -> Bool, merging parts: [Part]) -> FleetReport {
        var report = FleetReport(at: now, thresholds: configuration.thresholds)
        for (key, index) in beacons where listed(radios[index].identity) {
            let radio = radios[index]
            report.beacons.append(FleetReport.Beacon(key: key, identity: radio.identity, radio: radio.reported))
            check(radio, .beacon(key), silentSince: radio.lastHeard ?? radio.since, at: now, into: &report.problems)
        }
        for index in tags where !radios[index].isIncognito(at: now) && listed(radios[index].identity) {
            let radio = radios[index]
            report.tags.append(FleetReport.Tag(identity: radio.identity, radio: radio.reported))
            check(radio, .tag(radio.identity), silentSince: radio.lastHeard, at: now, into: &report.problems)
        }
        for (key, entry) in nodes.sorted(by: { $0.key < $1.key }) where !entry.isIncognito(at: now) {
            let node = self.node(key, entry, at: now, merging: parts)
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

    /// One node as this aggregator's batches, status and stats say, with what `parts`' batches add:
    /// the later times, the sum of the rates (theirs as of their part), the skew estimated from the
    /// latest batch.
    private func node(_ key: String, _ entry: NodeEntry, at now: Int64, merging parts: [Part]) -> FleetReport.Node {
        var lastHeard = entry.lastHeard
        var lastBatch = entry.lastBatch
        var rate = sightingsPerSecond(entry, at: now)
        var skew = entry.clockOffset.map { TimeBounds.difference(0, $0) }
        for part in parts {
            guard let theirs = part.nodes[key] else { continue }
            if let heard = theirs.lastHeard { lastHeard = max(lastHeard ?? heard, heard) }
            if let batch = theirs.lastBatch, lastBatch.map({ $0 < batch }) ?? true {
                lastBatch = batch
                skew = theirs.skew ?? skew
            }
            rate += theirs.sightingsPerSecond
        }
        let quiet = TimeBounds.difference(now, lastHeard ?? entry.since) > configuration.nodeDownAfter
        let state: FleetReport.Node.State = entry.offline ? .offline : quiet ? .silent : lastHeard == nil ? .unknown : .online
        return FleetReport.Node(key: key, state: state, carried: entry.carried, lastHeard: lastHeard, lastBatch: lastBatch,
                                sightingsPerSecond: rate, reportsPerSecond: entry.reportsPerSecond, skew: skew)
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
        FleetReport.Radio(lastHeard: lastHeard, batteryMillivolts: telemetry.batteryMillivolts, batteryAt: telemetry.batteryAt,
                          temperature: telemetry.temperature, uptime: telemetry.uptime)
    }
}
