/// Legacy LE advertising on the raw channel, beside the scan: what `--advertise` transmits.
extension HCIDevice {
    /// Starts advertising: off first (parameters and data may only change while it is off; a
    /// refusal there is ignored, as advertising may be off already), then parameters, data, on.
    /// Throws with the controller's status when it refuses one of them.
    func startAdvertising(_ configuration: HCIAdvertisingConfiguration, adapter: String) throws(BLEError) {
        _ = try? send(.setEnable(false), adapter: adapter)
        let commands: [LEAdvertisingCommand] = [
            .setParameters(interval: HCIScanConfiguration.units(configuration.interval)),
            .setData(configuration.data),
            .setEnable(true),
        ]
        let disallowed = "the controller is driven with extended advertising commands, as BlueZ drives Bluetooth 5 controllers, "
            + "or another program is advertising; --advertise sends legacy commands"
        for command in commands {
            try requireSuccess(send(command, adapter: adapter), command.action, adapter, disallowed: disallowed)
        }
    }

    /// Turns off the advertising `startAdvertising` turned on; failures are moot at shutdown.
    func stopAdvertising() {
        _ = try? send(.setEnable(false), adapter: "hci\(adapterIndex)")
    }

    private func send(_ command: LEAdvertisingCommand, adapter: String) throws(BLEError) -> UInt8 {
        try sendLE(ocf: command.ocf, command.parameters, adapter: adapter)
    }
}
