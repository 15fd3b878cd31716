import PresenceCore
import Testing
@testable import PresenceBLE

/// What a scan configuration with advertising accepts, and the one line that names what it refuses.
@Suite struct HCIAdvertisingConfigurationTests {
    private static let beacon = (try? IBeacon(identity: NodeBeacon.identity(of: "hall-a"), measuredPower: -59).advertisingData) ?? []

    private func scan(_ advertising: HCIAdvertisingConfiguration?, mode: HCIScanConfiguration.Mode = .scan) -> HCIScanConfiguration {
        var configuration = HCIScanConfiguration(adapter: "hci0")
        configuration.mode = mode
        configuration.advertising = advertising
        return configuration
    }

    @Test func aNodeBeaconEveryIntervalInRangeIsAccepted() throws {
        #expect(Self.beacon.count == 30)
        for interval in [100.0, 1_000, 10_240] {
            try scan(HCIAdvertisingConfiguration(data: Self.beacon, interval: interval)).validate()
        }
        try scan(nil, mode: .monitor).validate()
    }

    @Test(arguments: [
        (HCIAdvertisingConfiguration(data: beacon, interval: 99), "99.0 ms"),
        (HCIAdvertisingConfiguration(data: beacon, interval: 10_241), "10241.0 ms"),
        (HCIAdvertisingConfiguration(data: [UInt8](repeating: 1, count: 32)), "32 bytes"),
        (HCIAdvertisingConfiguration(data: []), "0 bytes"),
    ])
    func badFiguresAreRefusedNamingTheValue(_ advertising: HCIAdvertisingConfiguration, _ named: String) {
        let error = #expect(throws: BLEError.self) { try scan(advertising).validate() }
        #expect(error?.message.contains(named) == true, "\(error?.message ?? "no error")")
    }

    @Test func theMonitorChannelCannotAdvertise() {
        let error = #expect(throws: BLEError.self) { try scan(HCIAdvertisingConfiguration(data: Self.beacon), mode: .monitor).validate() }
        #expect(error?.message.contains("monitor") == true, "\(error?.message ?? "no error")")
    }
}
