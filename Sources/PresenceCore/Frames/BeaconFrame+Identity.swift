extension BeaconFrame {
    /// Eddystone states its calibrated power at 0 m; the contract's `tx` is at 1 m, about 41 dB less
    /// (free-space loss at 2.4 GHz over the first metre).
    public static let eddystoneLossAt1m = 41

    /// The contract's canonical identity for the beacon this frame names:
    /// `ibeacon:<uuid>:<major>:<minor>`, `altbeacon:<uuid>:<id2>:<id3>` (the 20-byte ID split
    /// 16+2+2) or `eddystone:<namespace>:<instance>`; nil for frames that name no beacon.
    public var beaconIdentity: String? {
        var text = ASCIIText()
        guard writeBeaconIdentity(into: &text) else { return nil }
        return text.string
    }

    /// The canonical identity of the advertiser that sent this frame from `address`: the beacon
    /// identity for identifying frames, `mac:<address>` for every other frame (Eddystone URL, TLM
    /// and EID, and advertisers that are no beacon).
    public func identity(address: BluetoothAddress) -> String {
        var text = ASCIIText()
        if !writeBeaconIdentity(into: &text) {
            text.append("mac:")
            text.append(address)
        }
        return text.string
    }

    /// The frame's calibrated power at 1 m, dBm, as the contract's `tx`: iBeacon's measured power and
    /// AltBeacon's reference RSSI as sent, Eddystone's 0 m figure less 41 dB. Nil when the frame
    /// states none, states 0 for a 1 m figure (uncalibrated; ibeacon-ble treats it so too), or
    /// the result falls outside the contract's range.
    public var txPowerAt1m: Int? {
        let value: Int
        switch self {
        case .iBeacon(let beacon):
            guard beacon.measuredPower != 0 else { return nil }
            value = Int(beacon.measuredPower)
        case .altBeacon(let beacon):
            guard beacon.referenceRSSI != 0 else { return nil }
            value = Int(beacon.referenceRSSI)
        case .eddystoneUID(let frame): value = Int(frame.txPowerAt0m) - BeaconFrame.eddystoneLossAt1m
        case .eddystoneURL(let frame): value = Int(frame.txPowerAt0m) - BeaconFrame.eddystoneLossAt1m
        case .eddystoneEID(let frame): value = Int(frame.txPowerAt0m) - BeaconFrame.eddystoneLossAt1m
        case .eddystoneTLM, .eddystoneEncryptedTLM, .other: return nil
        }
        return SightingLimits.txRange.contains(value) ? value : nil
    }

    /// Writes the beacon identity, returning false (and writing nothing) for non-identifying frames.
    func writeBeaconIdentity(into text: inout ASCIIText) -> Bool {
        switch self {
        case .iBeacon(let beacon):
            text.append("ibeacon:")
            text.appendUUID(beacon.uuid)
            text.append(0x3A)
            text.appendDecimal(beacon.major)
            text.append(0x3A)
            text.appendDecimal(beacon.minor)
        case .altBeacon(let beacon):
            text.append("altbeacon:")
            text.appendUUID(beacon.id1)
            text.append(0x3A)
            text.appendDecimal(beacon.id2)
            text.append(0x3A)
            text.appendDecimal(beacon.id3)
        case .eddystoneUID(let frame):
            text.append("eddystone:")
            text.appendHex(frame.namespace, digits: 20)
            text.append(0x3A)
            text.appendHex(UInt128(frame.instance), digits: 12)
        case .eddystoneURL, .eddystoneTLM, .eddystoneEncryptedTLM, .eddystoneEID, .other:
            return false
        }
        return true
    }
}
