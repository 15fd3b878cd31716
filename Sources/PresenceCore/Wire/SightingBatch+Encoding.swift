extension SightingBatch {
    /// The batch as the UTF-8 JSON a node publishes.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + sightings.count * 110)
        writer.object { w in
            w.member("v", 1)
            w.member("node", node)
            w.member("seq", seq)
            w.member("sent", sent)
            w.key("sightings")
            w.array { w in
                for sighting in sightings { sighting.write(to: &w) }
            }
        }
        return writer.bytes
    }
}

extension Sighting {
    func write(to writer: inout JSONWriter) {
        writer.object { w in
            w.member("ts", ts)
            w.member("id", id)
            w.member("rssi", rssi)
            w.member("tx", tx)
            w.member("addr", addr)
            if let telemetry {
                w.key("tlm")
                w.object { w in
                    w.member("batt", telemetry.batteryMillivolts)
                    w.member("temp", number: telemetry.temperature)
                    w.member("adv", telemetry.advertisementCount.map { Int64($0) })
                    w.member("up", number: telemetry.uptime, decimals: 1)
                    if telemetry.encrypted {
                        w.key("encrypted")
                        w.bool(true)
                    }
                }
            }
        }
    }
}
