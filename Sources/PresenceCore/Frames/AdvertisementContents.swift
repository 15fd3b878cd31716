/// What one advertisement's AD structures carry: its most telling beacon frame (an identifying frame
/// first, then another Eddystone frame, then telemetry) and any Eddystone telemetry beside it, as
/// some beacons put a TLM next to their iBeacon.
struct AdvertisementContents {
    var frame: BeaconFrame = .other
    var telemetry: Telemetry?

    init(_ data: ArraySlice<UInt8>) {
        for structure in ADStructures(data) {
            guard let found = BeaconFrame(structure) else { continue }
            switch found {
            case .eddystoneTLM(let tlm):
                if telemetry == nil { telemetry = tlm.telemetry }
            case .eddystoneEncryptedTLM(let etlm):
                if telemetry == nil { telemetry = etlm.telemetry }
            default:
                break
            }
            if rank(found) > rank(frame) { frame = found }
            if frame.isIdentifying && telemetry != nil { return }
        }
    }

    private func rank(_ frame: BeaconFrame) -> Int {
        switch frame.kind {
        case .iBeacon, .altBeacon, .eddystoneUID: 3
        case .eddystoneURL, .eddystoneEID: 2
        case .eddystoneTLM, .eddystoneEncryptedTLM: 1
        case .other: 0
        }
    }
}
