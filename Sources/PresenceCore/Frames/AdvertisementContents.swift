/// What one advertisement's AD structures carry: its most telling beacon frame (an identifying frame
/// first, then another Eddystone frame, then telemetry) and any Eddystone telemetry beside it, as
/// some beacons put a TLM next to their iBeacon. Walks the structures by offset, as `ADStructures`
/// does, without making a slice of each.
struct AdvertisementContents {
    var frame: BeaconFrame = .other
    var telemetry: Telemetry?

    init(_ data: Span<UInt8>) {
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            guard length > 0, length < data.count - offset else { return }
            let type = data[offset + 1]
            if type == ADStructure.Types.manufacturerSpecific || type == ADStructure.Types.serviceData16,
               let found = BeaconFrame.parse(type: type, data: data.extracting(offset + 2 ..< offset + 1 + length)) {
                switch found {
                case .eddystoneTLM(let tlm):
                    if telemetry == nil { telemetry = tlm.telemetry }
                case .eddystoneEncryptedTLM(let etlm):
                    if telemetry == nil { telemetry = etlm.telemetry }
                default:
                    break
                }
                if Self.rank(found) > Self.rank(frame) { frame = found }
                if frame.isIdentifying && telemetry != nil { return }
            }
            offset += 1 + length
        }
    }

    private static func rank(_ frame: BeaconFrame) -> Int {
        switch frame.kind {
        case .iBeacon, .altBeacon, .eddystoneUID: 3
        case .eddystoneURL, .eddystoneEID: 2
        case .eddystoneTLM, .eddystoneEncryptedTLM: 1
        case .other: 0
        }
    }
}
