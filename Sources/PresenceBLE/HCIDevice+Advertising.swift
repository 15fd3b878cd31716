/// LE advertising on the raw channel, beside the scan: what `--advertise` transmits.
extension HCIDevice {
    /// Which commands a controller accepted for advertising.
    enum AdvertisingCommands: Sendable {
        case legacy, extended
    }

    /// Starts advertising with the legacy commands, or with one extended advertising set of our
    /// own when the controller refuses the legacy ones (status 0x0C: BlueZ drives Bluetooth 5
    /// controllers with extended commands, and a controller takes one kind or the other until it
    /// is reset). Sending it again re-establishes it (after bluetoothd took the legacy advertising
    /// over, or cleared the sets). Throws with the controller's status when it refuses a command.
    func startAdvertising(_ configuration: HCIAdvertisingConfiguration, adapter: String) throws(BLEError) -> AdvertisingCommands {
        let units = HCIScanConfiguration.units(configuration.interval)
        // Parameters and data may only change while advertising is off; a refusal of "off" is
        // ignored, as advertising may be off already.
        _ = try? send(.setEnable(false), adapter: adapter)
        let parameters = LEAdvertisingCommand.setParameters(interval: units)
        let status = try send(parameters, adapter: adapter)
        if status != Self.commandDisallowed {
            try requireSuccess(status, parameters.action, adapter, disallowed: Self.legacyDisallowed)
            try run([.setData(configuration.data), .setEnable(true)], adapter: adapter, disallowed: Self.legacyDisallowed)
            return .legacy
        }
        _ = try? send(.setExtendedEnable(false), adapter: adapter)
        try run([.setExtendedParameters(interval: units), .setExtendedData(configuration.data), .setExtendedEnable(true)],
                adapter: adapter, disallowed: Self.extendedDisallowed)
        return .extended
    }

    /// Turns off the advertising `startAdvertising` turned on (and frees the extended set);
    /// failures are moot at shutdown.
    func stopAdvertising(_ commands: AdvertisingCommands) {
        let adapter = "hci\(adapterIndex)"
        switch commands {
        case .legacy:
            _ = try? send(.setEnable(false), adapter: adapter)
        case .extended:
            _ = try? send(.setExtendedEnable(false), adapter: adapter)
            _ = try? send(.removeSet(), adapter: adapter)
        }
    }

    private static let commandDisallowed: UInt8 = 0x0C
    private static let legacyDisallowed = "another program is advertising with legacy commands; stop it or leave --advertise out"
    private static let extendedDisallowed = "the controller refused both legacy and extended advertising; is another program resetting it?"

    private func run(_ commands: [LEAdvertisingCommand], adapter: String, disallowed: String) throws(BLEError) {
        for command in commands {
            try requireSuccess(send(command, adapter: adapter), command.action, adapter, disallowed: disallowed)
        }
    }

    private func send(_ command: LEAdvertisingCommand, adapter: String) throws(BLEError) -> UInt8 {
        try sendLE(ocf: command.ocf, command.parameters, adapter: adapter)
    }
}
