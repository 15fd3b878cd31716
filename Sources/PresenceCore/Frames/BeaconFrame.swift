/// The beacon frame an advertisement carries, parsed straight from its bytes: an identifying frame
/// (iBeacon, AltBeacon, Eddystone-UID), another Eddystone frame, or `.other` for anything else,
/// malformed beacon frames included.
public enum BeaconFrame: Hashable, Sendable {
    case iBeacon(IBeacon)
    case altBeacon(AltBeacon)
    case eddystoneUID(EddystoneUID)
    case eddystoneURL(EddystoneURL)
    case eddystoneTLM(EddystoneTLM)
    case eddystoneEncryptedTLM(EddystoneEncryptedTLM)
    case eddystoneEID(EddystoneEID)
    case other

    /// Which case this is, without its payload.
    public var kind: FrameKind {
        switch self {
        case .iBeacon: .iBeacon
        case .altBeacon: .altBeacon
        case .eddystoneUID: .eddystoneUID
        case .eddystoneURL: .eddystoneURL
        case .eddystoneTLM: .eddystoneTLM
        case .eddystoneEncryptedTLM: .eddystoneEncryptedTLM
        case .eddystoneEID: .eddystoneEID
        case .other: .other
        }
    }

    /// Whether the frame names a beacon (iBeacon, AltBeacon, Eddystone-UID).
    public var isIdentifying: Bool { kind.isIdentifying }

    /// Whether the frame is Eddystone telemetry, plain or encrypted.
    public var isTelemetry: Bool { kind == .eddystoneTLM || kind == .eddystoneEncryptedTLM }
}

/// The kinds of `BeaconFrame`, for counting.
public enum FrameKind: Int, CaseIterable, Sendable {
    case iBeacon, altBeacon, eddystoneUID, eddystoneURL, eddystoneTLM, eddystoneEncryptedTLM, eddystoneEID, other

    /// A short stable name, for counters and logs.
    public var name: String {
        switch self {
        case .iBeacon: "ibeacon"
        case .altBeacon: "altbeacon"
        case .eddystoneUID: "eddystone_uid"
        case .eddystoneURL: "eddystone_url"
        case .eddystoneTLM: "eddystone_tlm"
        case .eddystoneEncryptedTLM: "eddystone_etlm"
        case .eddystoneEID: "eddystone_eid"
        case .other: "other"
        }
    }

    /// Whether frames of this kind name a beacon.
    public var isIdentifying: Bool {
        self == .iBeacon || self == .altBeacon || self == .eddystoneUID
    }
}
