extension FleetReport {
    /// The report as published on `{p}/v1/health`, or a part on `{p}/v1/health/parts/{aggregator}`
    /// (`schemas/json/health.schema.json`).
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + 160 * (beacons.count + tags.count + nodes.count))
        writer.object { w in
            w.member("v", 1)
            w.member("at", at)
            w.key("thresholds")
            w.object { w in
                w.member("low_battery_mv", thresholds.lowBattery)
                w.member("silent_after_ms", thresholds.silentAfter)
                w.member("node_down_after_ms", thresholds.nodeDownAfter)
                w.member("max_skew_ms", thresholds.maxSkew)
                w.member("interval_ms", thresholds.interval)
            }
            w.key("problems")
            w.array { w in
                for problem in problems { problem.write(to: &w) }
            }
            w.key("beacons")
            w.array { w in
                for beacon in beacons {
                    w.object { w in
                        w.member("beacon", beacon.key)
                        w.member("id", beacon.identity)
                        beacon.radio.write(to: &w)
                    }
                }
            }
            w.key("tags")
            w.array { w in
                for tag in tags {
                    w.object { w in
                        w.member("id", tag.identity)
                        tag.radio.write(to: &w)
                    }
                }
            }
            w.key("nodes")
            w.array { w in
                for node in nodes { node.write(to: &w) }
            }
            if let shards {
                w.key("shards")
                w.array { w in
                    for shard in shards { w.int(shard) }
                }
            }
        }
        return writer.bytes
    }
}

extension FleetReport.Problem.Subject {
    /// The member that names the subject (`beacon`, `tag` or `node`), and its value.
    public var member: (name: String, value: String) {
        switch self {
        case .beacon(let key): ("beacon", key)
        case .tag(let identity): ("tag", identity)
        case .node(let key): ("node", key)
        }
    }
}

extension FleetReport.Problem {
    fileprivate func write(to w: inout JSONWriter) {
        w.object { w in
            w.member("kind", kind.rawValue)
            w.member(subject.member.name, subject.member.value)
            w.member("battery_mv", batteryMillivolts)
            w.member("last_heard", lastHeard)
            w.member("state", state?.rawValue)
            w.member("skew_ms", skew)
        }
    }
}

extension FleetReport.Radio {
    fileprivate func write(to w: inout JSONWriter) {
        w.member("last_heard", lastHeard)
        w.member("battery_mv", batteryMillivolts)
        w.member("battery_at", batteryAt)
        w.member("temperature", number: temperature)
        w.member("uptime_s", number: uptime, decimals: 1)
    }
}

extension FleetReport.Node {
    fileprivate func write(to w: inout JSONWriter) {
        w.object { w in
            w.member("node", key)
            w.member("state", state.rawValue)
            w.key("carried")
            w.bool(carried)
            w.member("last_heard", lastHeard)
            w.member("last_batch", lastBatch)
            w.member("sightings_per_s", number: sightingsPerSecond, decimals: 1)
            w.member("reports_per_s", number: reportsPerSecond, decimals: 1)
            w.member("skew_ms", skew)
        }
    }
}
