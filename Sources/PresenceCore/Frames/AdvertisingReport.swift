/// One advertising report from an HCI LE Advertising Report (0x02) or LE Extended Advertising Report
/// (0x0D) event: who sent it, how strong, and its advertising data.
public struct AdvertisingReport: Equatable, Sendable {
    /// The event type as extended reports give it; legacy event types are mapped to their
    /// legacy-PDU combinations (ADV_IND is `[.legacy, .scannable, .connectable]`).
    public var properties: AdvertisingEventProperties
    /// The legacy report's event type byte (0 ADV_IND … 4 SCAN_RSP); nil for extended reports.
    public var legacyEventType: UInt8?
    /// The address type byte as sent.
    public var addressTypeByte: UInt8
    public var address: BluetoothAddress
    /// Received strength, dBm; nil when the controller says it is unavailable (127).
    public var rssi: Int8?
    /// Transmit power the advertiser states in an extended report, dBm; nil when absent (127).
    public var txPower: Int8?
    /// Advertising set ID of an extended report; 0xFF when there is none (and in legacy reports).
    public var advertisingSID: UInt8
    /// Primary and secondary PHYs of an extended report (1 = 1M, 3 = Coded; secondary 0 = none).
    public var primaryPHY: UInt8
    public var secondaryPHY: UInt8
    /// The advertising data (AD structures), a slice of the event it came from.
    public var data: ArraySlice<UInt8>

    public init(
        properties: AdvertisingEventProperties, legacyEventType: UInt8? = nil, addressTypeByte: UInt8,
        address: BluetoothAddress, rssi: Int8?, txPower: Int8? = nil, advertisingSID: UInt8 = 0xFF,
        primaryPHY: UInt8 = 1, secondaryPHY: UInt8 = 0, data: ArraySlice<UInt8>
    ) {
        self.properties = properties
        self.legacyEventType = legacyEventType
        self.addressTypeByte = addressTypeByte
        self.address = address
        self.rssi = rssi
        self.txPower = txPower
        self.advertisingSID = advertisingSID
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.data = data
    }

    /// What kind of address the advertiser used.
    public var addressType: AddressType { AddressType(typeByte: addressTypeByte, address: address) }

    /// Whether the data completes the advertisement, or more is to come, or the controller cut it.
    public var dataStatus: AdvertisingDataStatus { properties.dataStatus }

    /// Whether this is a scan response rather than an advertisement.
    public var isScanResponse: Bool { properties.contains(.scanResponse) }
}

/// The Event_Type bits of an extended advertising report (Core spec Vol 4 Part E 7.7.65.13). Real
/// values are combinations such as 0x13, so this is an option set, not an enum.
public struct AdvertisingEventProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let connectable = AdvertisingEventProperties(rawValue: 1 << 0)
    public static let scannable = AdvertisingEventProperties(rawValue: 1 << 1)
    public static let directed = AdvertisingEventProperties(rawValue: 1 << 2)
    public static let scanResponse = AdvertisingEventProperties(rawValue: 1 << 3)
    public static let legacy = AdvertisingEventProperties(rawValue: 1 << 4)

    /// Bits 5–6.
    public var dataStatus: AdvertisingDataStatus {
        AdvertisingDataStatus(rawValue: UInt8(truncatingIfNeeded: rawValue >> 5) & 0b11)
    }

    /// The same properties with another data status.
    public func with(_ status: AdvertisingDataStatus) -> AdvertisingEventProperties {
        AdvertisingEventProperties(rawValue: rawValue & ~(0b11 << 5) | UInt16(status.rawValue) << 5)
    }

    /// The legacy event types of subevent 0x02 as the extended report would state them. A legacy
    /// SCAN_RSP does not say which advertisement it answers; it maps to the ADV_SCAN_IND answer.
    public init(legacyEventType type: UInt8) {
        switch type {
        case 0: self = [.legacy, .scannable, .connectable]
        case 1: self = [.legacy, .directed, .connectable]
        case 2: self = [.legacy, .scannable]
        case 3: self = [.legacy]
        case 4: self = [.legacy, .scanResponse, .scannable]
        default: self = [.legacy]
        }
    }
}

/// Whether a report's data is the whole advertisement (Event_Type bits 5–6).
public struct AdvertisingDataStatus: Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0b11 }

    /// The data is complete.
    public static let complete = AdvertisingDataStatus(rawValue: 0)
    /// Incomplete, more to come in the next report from the same advertiser and set.
    public static let incomplete = AdvertisingDataStatus(rawValue: 1)
    /// Incomplete and truncated: no more will come.
    public static let truncated = AdvertisingDataStatus(rawValue: 2)
}
