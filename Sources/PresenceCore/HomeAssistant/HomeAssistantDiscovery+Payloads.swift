extension HomeAssistantDiscovery {
    /// The availability template: the aggregator is available unless its status says `offline`
    /// (`degraded` still decides and publishes).
    static let availabilityTemplate = "{{ 'offline' if value_json.state == 'offline' else 'online' }}"

    /// A user's `device_tracker` discovery config: the entity is the user's device (its name is the
    /// user's), located by Bluetooth LE, available while the aggregator is.
    func trackerConfig(_ user: String, _ registry: Registry) -> [UInt8] {
        let id = HomeAssistantTopics.objectID(user)
        var writer = JSONWriter()
        writer.object { w in
            w.key("name")
            w.null()
            w.member("unique_id", id + "_tracker")
            w.member("state_topic", configuration.topics.trackerState(user))
            w.member("json_attributes_topic", configuration.topics.trackerAttributes(user))
            w.member("source_type", "bluetooth_le")
            w.member("icon", "mdi:account")
            w.member("qos", 1)
            writeCommon(&w, device: id + "_user", name: registry.users[user]?.name ?? user, model: "Presence user")
        }
        return writer.bytes
    }

    /// A beacon's occupancy `sensor` discovery config: how many people are there, read from the
    /// beacon's retained state (with who they are as an attribute).
    func sensorConfig(_ beacon: String, _ registry: Registry) -> [UInt8] {
        let id = HomeAssistantTopics.objectID(beacon)
        let topic = configuration.pipeline.beaconState(beacon)
        var writer = JSONWriter()
        writer.object { w in
            w.member("name", "Occupancy")
            w.member("unique_id", id + "_occupancy")
            w.member("state_topic", topic)
            w.member("value_template", "{{ value_json.count }}")
            w.member("json_attributes_topic", topic)
            w.member("json_attributes_template", "{{ {'users': value_json.users} | tojson }}")
            w.member("unit_of_measurement", "people")
            w.member("state_class", "measurement")
            w.member("icon", "mdi:account-group")
            w.member("qos", 1)
            writeCommon(&w, device: id + "_beacon", name: registry.beacons[beacon]?.name ?? beacon, model: "Presence beacon")
        }
        return writer.bytes
    }

    /// A zone's count `sensor` (how many people are at its beacons, with who as an attribute) or
    /// occupancy `binary_sensor` (anyone there), both reading the zone's retained state.
    func zoneConfig(_ zone: String, _ map: ZoneMap, occupancy: Bool) -> [UInt8] {
        let id = HomeAssistantTopics.zoneObjectID(zone)
        let topic = configuration.pipeline.zoneState(zone)
        var writer = JSONWriter()
        writer.object { w in
            w.member("name", occupancy ? "Occupancy" : "People")
            w.member("unique_id", id + (occupancy ? "_occupancy" : "_count"))
            w.member("state_topic", topic)
            if occupancy {
                w.member("value_template", "{{ 'ON' if value_json.count > 0 else 'OFF' }}")
                w.member("device_class", "occupancy")
            } else {
                w.member("value_template", "{{ value_json.count }}")
                w.member("json_attributes_topic", topic)
                w.member("json_attributes_template", "{{ {'users': value_json.users} | tojson }}")
                w.member("unit_of_measurement", "people")
                w.member("state_class", "measurement")
                w.member("icon", "mdi:account-group")
            }
            w.member("qos", 1)
            writeCommon(&w, device: id, name: map.zones[zone]?.name ?? zone, model: "Presence zone")
        }
        return writer.bytes
    }

    /// Availability, device and origin, the same for every entity.
    private func writeCommon(_ w: inout JSONWriter, device: String, name: String, model: String) {
        w.member("availability_topic", configuration.pipeline.aggregatorStatus)
        w.member("availability_template", Self.availabilityTemplate)
        w.key("device")
        w.object { w in
            w.key("identifiers")
            w.array { $0.string(device) }
            w.member("name", name)
            w.member("manufacturer", "presence")
            w.member("model", model)
        }
        w.key("origin")
        w.object { $0.member("name", "presence") }
    }

    /// The tracker's state: the beacon key, `not_home`, or `None` (Home Assistant's reset
    /// payload, which makes the location unknown).
    static func state(_ place: Place) -> [UInt8] {
        switch place {
        case .at(let beacon, _, _, _, _): Array(beacon.utf8)
        case .away: Array("not_home".utf8)
        case .hidden: Array("None".utf8)
        }
    }

    /// The tracker's attributes: where the user is (key and name of beacon and venue), how near
    /// the enter found them, and since when (ISO 8601); `beacon` null when away; empty when hidden.
    func attributes(_ place: Place, _ registry: Registry) -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            switch place {
            case .at(let beacon, let venue, let since, let distance, let proximity):
                w.member("beacon", beacon)
                w.member("beacon_name", registry.beacons[beacon]?.name)
                w.member("venue", venue)
                w.member("venue_name", venue.flatMap { registry.venues[$0]?.name })
                w.member("distance", number: distance)
                w.member("proximity", proximity?.rawValue)
                w.member("since", ISO8601Text.string(milliseconds: since))
            case .away(let since):
                w.key("beacon")
                w.null()
                w.member("since", since.map { ISO8601Text.string(milliseconds: $0) })
            case .hidden:
                break
            }
        }
        return writer.bytes
    }
}
