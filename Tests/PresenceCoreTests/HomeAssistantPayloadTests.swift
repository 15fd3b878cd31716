import Foundation
import Testing
@testable import PresenceCore

/// Every discovery payload against Home Assistant's documented fields: keys the documentation
/// lists for the platform, the required ones present, values of the documented types and choices,
/// and no abbreviations (full names throughout, so never a mix).
///
/// Sources (read 2026-11; the key lists below are written from them):
/// - https://www.home-assistant.io/integrations/device_tracker.mqtt/ (Configuration Variables;
///   "Using the discovery protocol"; `payload_not_home` default `not_home`, `payload_reset`
///   default `None`, `source_type` one of gps, router, bluetooth, bluetooth_le)
/// - https://www.home-assistant.io/integrations/sensor.mqtt/ (Configuration Variables;
///   `state_class`, `unit_of_measurement`, `value_template`, `json_attributes_template`)
/// - https://www.home-assistant.io/integrations/mqtt/ ("MQTT Discovery": the discovery topic
///   `<discovery_prefix>/<component>/[<node_id>/]<object_id>/config` with ids of `[a-zA-Z0-9_-]`;
///   an empty retained payload removes the entity; "Using availability topics"; the `device` and
///   `origin` mappings and the supported abbreviations)
/// - cross-checked with Home Assistant core's discovery schemas,
///   homeassistant/components/mqtt/schemas.py (`MQTT_ENTITY_COMMON_SCHEMA`,
///   `MQTT_ENTITY_DEVICE_INFO_SCHEMA`, `MQTT_ORIGIN_INFO_SCHEMA`), device_tracker.py and sensor.py.
@Suite struct HomeAssistantPayloadTests {
    /// Options every MQTT entity takes (availability, device, origin, attributes, ids, icon).
    static let common: Set<String> = [
        "availability", "availability_mode", "availability_template", "availability_topic", "payload_available", "payload_not_available",
        "device", "origin", "enabled_by_default", "entity_category", "entity_picture", "icon", "json_attributes_template",
        "json_attributes_topic", "name", "object_id", "default_entity_id", "unique_id", "qos", "encoding",
    ]
    static let deviceTracker: Set<String> = common.union([
        "state_topic", "value_template", "payload_home", "payload_not_home", "payload_reset", "source_type",
    ])
    static let sensor: Set<String> = common.union([
        "state_topic", "value_template", "device_class", "expire_after", "force_update", "last_reset_value_template", "options",
        "suggested_display_precision", "state_class", "unit_of_measurement",
    ])
    static let device: Set<String> = [
        "configuration_url", "connections", "hw_version", "identifiers", "manufacturer", "model", "model_id", "name", "serial_number",
        "suggested_area", "sw_version", "via_device",
    ]
    static let origin: Set<String> = ["name", "sw_version", "support_url"]
    /// Home Assistant's abbreviations of the options above (the MQTT page's list, core's
    /// homeassistant/components/mqtt/abbreviations.py).
    static let abbreviations: Set<String> = [
        "avty", "avty_mode", "avty_tpl", "avty_t", "pl_avail", "pl_not_avail", "dev", "o", "en", "ent_cat", "ent_pic", "ic",
        "json_attr_tpl", "json_attr_t", "obj_id", "def_ent_id", "uniq_id", "e", "stat_t", "val_tpl", "pl_home", "pl_not_home", "pl_rst",
        "src_type", "dev_cla", "exp_aft", "frc_upd", "lrst_val_tpl", "ops", "sug_dsp_prc", "stat_cla", "unit_of_meas", "ids", "cns", "mf",
        "mdl", "mdl_id", "sn", "sa", "sw", "hw", "cu", "url", "p",
    ]

    static var payloads: [OutboundMessage] {
        var registry = HomeAssistantDiscoveryTests.registry
        registry.beacons["desk.3"] = .init(key: "desk.3", venue: "expo", name: "Desk \"3\"")
        var discovery = HomeAssistantDiscoveryTests.Tracking()
        return discovery.update(registry: registry, at: HomeAssistantDiscoveryTests.t0).filter { $0.topic.hasSuffix("/config") }
    }

    @Test func everyConfigUsesOnlyDocumentedFieldsWithTheRequiredOnes() throws {
        let configs = Self.payloads
        #expect(configs.count == 5)
        let topic = try Regex("^ha/(device_tracker|sensor)/[a-zA-Z0-9_-]+/config$")
        for message in configs {
            #expect(message.retain)
            #expect(message.topic.wholeMatch(of: topic) != nil, "discovery topic \(message.topic)")
            let config = try #require(HomeAssistantDiscoveryTests.object(message), "\(message.topic) is not a JSON object")
            let tracker = message.topic.contains("/device_tracker/")
            let allowed = tracker ? Self.deviceTracker : Self.sensor
            #expect(Set(config.keys).subtracting(allowed).isEmpty, "undocumented keys in \(message.topic): \(Set(config.keys).subtracting(allowed))")
            #expect(Set(config.keys).isDisjoint(with: Self.abbreviations))
            // A device and its entity need a unique id; a tracker needs a state (or attributes) topic, a sensor a state topic.
            for key in ["unique_id", "state_topic", "device", "origin", "availability_topic", "availability_template"] {
                #expect(config[key] is String || config[key] is [String: Any], "\(message.topic) lacks \(key)")
            }
            #expect(config["qos"] as? Int == 1)
            #expect((config["availability_topic"] as? String) == "site/presence/v1/aggregator/status")

            let device = try #require(config["device"] as? [String: Any])
            #expect(Set(device.keys).subtracting(Self.device).isEmpty && Set(device.keys).isDisjoint(with: Self.abbreviations))
            #expect((device["identifiers"] as? [String])?.isEmpty == false, "a device needs identifiers")
            #expect(device["name"] is String)
            let origin = try #require(config["origin"] as? [String: Any])
            #expect(Set(origin.keys).subtracting(Self.origin).isEmpty && origin["name"] is String)

            if tracker {
                #expect(config["name"] is NSNull, "the tracker is its user's device: no name of its own")
                #expect(["gps", "router", "bluetooth", "bluetooth_le"].contains(config["source_type"] as? String ?? ""))
                #expect(config["json_attributes_topic"] is String)
            } else {
                #expect(["measurement", "total", "total_increasing"].contains(config["state_class"] as? String ?? ""))
                #expect(config["unit_of_measurement"] is String && config["value_template"] is String)
                #expect((config["state_topic"] as? String)?.hasPrefix("site/presence/v1/state/beacons/") == true)
            }
        }
        let ids = configs.compactMap { HomeAssistantDiscoveryTests.object($0)?["unique_id"] as? String }
        #expect(Set(ids).count == configs.count, "unique ids are unique")
        let desk = try #require(configs.first { $0.topic == "ha/sensor/presence_desk_DOT_3/config" })
        #expect((HomeAssistantDiscoveryTests.object(desk)?["device"] as? [String: Any])?["name"] as? String == "Desk \"3\"")
    }

    @Test func statesAreTheDocumentedPayloadsAndTheTemplatesReadThePipelinesPayloads() throws {
        #expect(HomeAssistantDiscovery.state(.away(since: nil)) == Array("not_home".utf8), "payload_not_home's default")
        #expect(HomeAssistantDiscovery.state(.hidden) == Array("None".utf8), "payload_reset's default")
        // The templates name fields the aggregator's payloads have.
        let sensor = try #require(Self.payloads.first { $0.topic.contains("/sensor/") }.flatMap(HomeAssistantDiscoveryTests.object))
        #expect(sensor["value_template"] as? String == "{{ value_json.count }}")
        let beaconState = try #require(JSONSerialization.jsonObject(with: Data(BeaconState(beacon: "a", users: ["alice"]).encoded())) as? [String: Any])
        #expect(beaconState["count"] as? Int == 1 && beaconState["users"] as? [String] == ["alice"])
        #expect((sensor["availability_template"] as? String)?.contains("value_json.state") == true)
        let status = try #require(JSONSerialization.jsonObject(with: Data(ServiceStatus(state: .degraded).encoded())) as? [String: Any])
        #expect(status["state"] as? String == "degraded")
    }
}
