import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceMQTT
import PresencePostgres

/// The broker, topic prefix and database flags together, for the commands that take all three
/// (`presence-aggregator` and every `presencectl` subcommand).
public struct ConnectionOptions: ParsableArguments {
    @OptionGroup public var brokerOptions: BrokerOptions
    @OptionGroup public var databaseOptions: DatabaseOptions

    public init() {}

    public func mqttBroker() throws -> MQTTBroker {
        try brokerOptions.mqttBroker()
    }

    public func topics() throws -> Topics {
        try brokerOptions.topics()
    }

    public func databaseConfiguration() throws -> PostgresConfiguration {
        try databaseOptions.databaseConfiguration()
    }
}
