import ArgumentParser
import PresenceCore

/// The foreign nodes read beside the project's own (`ForeignTopics`): the aggregator's flags, which
/// `presencectl record` and `replay` take too, so that a recording holds what the aggregator heard.
public struct ForeignOptions: ParsableArguments {
    @Option(help: "Also read ESPresense nodes that publish under this topic prefix (ESPresense's default: espresense); a room is the node whose key is its name.")
    public var espresense: String?

    @Option(help: "Also read OpenMQTTGateway gateways that publish BLE under this topic prefix (its default: home); a gateway is the node whose key is its name.")
    public var openmqttgateway: String?

    @Option(help: "Also read Theengs Gateway gateways that publish under this topic prefix (its default: home); a gateway is the node whose key is its name.")
    public var theengs: String?

    public init() {}

    /// The topics these flags name; a bad prefix names its flag.
    public func topics() throws -> ForeignTopics {
        try ForeignTopics(espresense: espresense, openMQTTGateway: openmqttgateway, theengs: theengs)
    }
}
