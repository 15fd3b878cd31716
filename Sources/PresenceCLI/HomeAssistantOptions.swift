import ArgumentParser
import PresenceCore

/// Home Assistant's discovery prefix, for the aggregator that publishes there and for
/// `presencectl user forget`, which clears what it published.
public struct HomeAssistantPrefix: ParsableArguments {
    @Option(help: "Home Assistant's MQTT discovery prefix (default: $PRESENCE_HA_PREFIX or 'homeassistant').")
    public var haPrefix: String?

    public init() {}

    public func topics() throws -> HomeAssistantTopics {
        try HomeAssistantTopics(prefix: haPrefix ?? Environment.value("PRESENCE_HA_PREFIX") ?? "homeassistant")
    }
}

/// `presence-aggregator`'s Home Assistant flags: discovery on or off, and its prefix.
public struct HomeAssistantOptions: ParsableArguments {
    @Flag(help: "Publish Home Assistant MQTT discovery, retained: a device_tracker per user (state: the beacon key or not_home) and an occupancy sensor per beacon.")
    public var haDiscovery = false

    @OptionGroup public var prefix: HomeAssistantPrefix

    public init() {}

    /// Discovery as the flags say, or nil when off.
    public func configuration(pipeline: Topics) throws -> HomeAssistantDiscovery.Configuration? {
        guard haDiscovery else { return nil }
        return HomeAssistantDiscovery.Configuration(topics: try prefix.topics(), pipeline: pipeline)
    }
}
