/// Where Home Assistant's MQTT discovery finds the pipeline's users and beacons, under its
/// discovery prefix (`homeassistant` by default, `--ha-prefix`): a `device_tracker` per user at
/// `{prefix}/device_tracker/presence_{user}/config` with its state and attributes beside it, and a
/// `sensor` per beacon at `{prefix}/sensor/presence_{beacon}/config`; per zone a count `sensor` and
/// an occupancy `binary_sensor` at `{prefix}/sensor/presence_ZONE_{zone}/config` and
/// `{prefix}/binary_sensor/presence_ZONE_{zone}/config`.
public struct HomeAssistantTopics: Sendable, Equatable {
    public let prefix: String

    /// Validates the prefix as `Topics` does its own.
    public init(prefix: String = "homeassistant") throws(ValueError) {
        try Topics.validate(prefix: prefix, what: "--ha-prefix", example: "'homeassistant'")
        self.prefix = prefix
    }

    public func trackerConfig(_ user: String) -> String { tracker(user) + "/config" }
    /// Carries the beacon key the user is at, `not_home`, or `None` (unknown: incognito).
    public func trackerState(_ user: String) -> String { tracker(user) + "/state" }
    /// Carries a JSON object: beacon, its name, venue, distance, proximity, since.
    public func trackerAttributes(_ user: String) -> String { tracker(user) + "/attributes" }
    public func sensorConfig(_ beacon: String) -> String { "\(prefix)/sensor/\(Self.objectID(beacon))/config" }
    /// How many people are in a zone.
    public func zoneCountConfig(_ zone: String) -> String { "\(prefix)/sensor/\(Self.zoneObjectID(zone))/config" }
    /// Whether anyone is in a zone.
    public func zoneOccupancyConfig(_ zone: String) -> String { "\(prefix)/binary_sensor/\(Self.zoneObjectID(zone))/config" }

    /// Every topic the aggregator may retain about `user`, the discovery config first (so that
    /// Home Assistant drops the entity before its state goes).
    public func userTopics(_ user: String) -> [String] {
        [trackerConfig(user), trackerState(user), trackerAttributes(user)]
    }

    private func tracker(_ user: String) -> String { "\(prefix)/device_tracker/\(Self.objectID(user))" }

    /// `presence_` and the key, with each `.` written `_DOT_`: Home Assistant's object ids allow
    /// only `[a-zA-Z0-9_-]`, and keys, which never hold upper case, stay apart (`a.b` and `a_b`
    /// differ) because the upper-case letters come from dots alone.
    /// `presence_ZONE_` and the key written as `objectID` writes it: no key's object id holds
    /// `ZONE` (upper case comes from dots alone, as `_DOT_`), so a zone and a beacon of the same
    /// key stay apart.
    public static func zoneObjectID(_ key: String) -> String {
        "presence_ZONE_" + objectID(key).dropFirst("presence_".count)
    }

    public static func objectID(_ key: String) -> String {
        var id = "presence_"
        for character in key {
            if character == "." { id += "_DOT_" } else { id.append(character) }
        }
        return id
    }
}
