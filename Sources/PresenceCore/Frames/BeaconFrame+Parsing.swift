extension BeaconFrame {
    /// The first beacon frame in advertising data (a sequence of AD structures), or `.other`.
    /// Truncated structures are ignored; nothing outside `advertisingData` is read.
    public init(advertisingData: ArraySlice<UInt8>) {
        for structure in ADStructures(advertisingData) {
            if let frame = BeaconFrame(structure) {
                self = frame
                return
            }
        }
        self = .other
    }

    public init(advertisingData: [UInt8]) {
        self.init(advertisingData: advertisingData[...])
    }

    /// The beacon frame one AD structure carries, or nil when it carries none this code reads.
    public init?(_ structure: ADStructure) {
        guard let frame = BeaconFrame.parse(type: structure.type, data: structure.data.span) else { return nil }
        self = frame
    }

    /// The beacon frame in manufacturer-specific data as BlueZ or Android hand it over: the company
    /// ID (little-endian) first. `.other` when it is neither iBeacon nor AltBeacon.
    public init(manufacturerData: ArraySlice<UInt8>) {
        self = BeaconFrame.parse(type: ADStructure.Types.manufacturerSpecific, data: manufacturerData.span) ?? .other
    }

    /// The frame in one AD structure's data, given its type.
    static func parse(type: UInt8, data span: Span<UInt8>) -> BeaconFrame? {
        switch type {
        case ADStructure.Types.manufacturerSpecific:
            if let beacon = IBeacon(manufacturerData: span) { return .iBeacon(beacon) }
            if let beacon = AltBeacon(manufacturerData: span) { return .altBeacon(beacon) }
            return nil
        case ADStructure.Types.serviceData16:
            guard span.count >= 3, span[0] == 0xAA, span[1] == 0xFE else { return nil }
            return eddystone(frame: span.extracting(2...))
        default:
            return nil
        }
    }

    /// An Eddystone frame (the service data after the 0xFEAA UUID). The whole first byte must be a
    /// known frame type: the specification puts the type in the high nibble and reserves the low one,
    /// and beacontools refuses 0x01 (vector `bt_bad_4`).
    private static func eddystone(frame span: Span<UInt8>) -> BeaconFrame? {
        switch span[0] {
        case 0x00: EddystoneUID(frame: span).map(BeaconFrame.eddystoneUID)
        case 0x10: EddystoneURL(frame: span).map(BeaconFrame.eddystoneURL)
        case 0x20:
            if let tlm = EddystoneTLM(frame: span) {
                .eddystoneTLM(tlm)
            } else {
                EddystoneEncryptedTLM(frame: span).map(BeaconFrame.eddystoneEncryptedTLM)
            }
        case 0x30: EddystoneEID(frame: span).map(BeaconFrame.eddystoneEID)
        default: nil
        }
    }
}
