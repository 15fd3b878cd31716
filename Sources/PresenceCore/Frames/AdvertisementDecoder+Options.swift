extension AdvertisementDecoder {
    /// The decoder's policy: which advertisers become sightings and how they are named.
    public struct Options: Sendable {
        /// Which advertisers without a beacon frame become `mac:` sightings.
        public enum AddressPolicy: Sendable {
            /// Only stable addresses: public, random static, and identity addresses the controller
            /// resolved. Rotating private addresses are dropped: they name no one for long.
            case stableOnly
            /// Every address but an anonymous one, rotating private addresses included.
            case all
            /// None: only beacon frames are published.
            case none
        }

        /// Who gets a `mac:` sighting. Beacon frames (iBeacon, AltBeacon, Eddystone-UID) are published
        /// whatever the address, since the frame names the beacon.
        public var addresses: AddressPolicy
        /// When set, addresses are replaced by keyed pseudonyms, in `mac:` identities and in `addr`.
        public var hashing: AddressHasher?
        /// When not empty, only identities starting with one of these prefixes are published
        /// (for example `ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e`). Case does not matter.
        public var allow: [String]
        /// Identities starting with one of these prefixes are never published; deny wins over allow.
        public var deny: [String]
        /// Reports weaker than this, dBm, are dropped.
        public var minimumRSSI: Int?
        /// Whether scan responses without a beacon frame become `mac:` sightings (they repeat an
        /// advertiser already heard through its advertisements, with other data).
        public var includeScanResponses: Bool
        /// How long, in ms, telemetry waits for the next identifying frame of its advertiser, and
        /// how long an advertiser counts as one that sends identifying frames.
        public var telemetryMaxAge: Int64
        /// How many distinct advertisers to keep canonical texts and telemetry for; past it the
        /// caches start over.
        public var cacheCapacity: Int

        public init(
            addresses: AddressPolicy = .stableOnly, hashing: AddressHasher? = nil, allow: [String] = [],
            deny: [String] = [], minimumRSSI: Int? = nil, includeScanResponses: Bool = false,
            telemetryMaxAge: Int64 = 30_000, cacheCapacity: Int = 16_384
        ) {
            self.addresses = addresses
            self.hashing = hashing
            self.allow = allow
            self.deny = deny
            self.minimumRSSI = minimumRSSI
            self.includeScanResponses = includeScanResponses
            self.telemetryMaxAge = telemetryMaxAge
            self.cacheCapacity = cacheCapacity
        }
    }

    /// Why a report became no sighting.
    public enum DropReason: Int, CaseIterable, Sendable {
        /// The controller did not measure the signal (RSSI 127).
        case rssiUnavailable
        /// RSSI outside the contract's [-127, 20].
        case rssiOutOfRange
        /// Weaker than `minimumRSSI`.
        case belowMinimumRSSI
        /// No beacon frame, and a rotating private address.
        case privateAddress
        /// No beacon frame, and no address at all.
        case anonymousAddress
        /// No beacon frame, and an address of a reserved or unknown type.
        case unusableAddress
        /// No beacon frame, and `mac:` sightings are off.
        case addressesOff
        /// A scan response without a beacon frame.
        case scanResponse
        /// The identity matches a deny prefix.
        case denied
        /// An allow list is set and the identity matches none of it.
        case notAllowed

        /// A short stable name, for counters and logs.
        public var name: String {
            switch self {
            case .rssiUnavailable: "rssi_unavailable"
            case .rssiOutOfRange: "rssi_out_of_range"
            case .belowMinimumRSSI: "below_minimum_rssi"
            case .privateAddress: "private_address"
            case .anonymousAddress: "anonymous_address"
            case .unusableAddress: "unusable_address"
            case .addressesOff: "addresses_off"
            case .scanResponse: "scan_response"
            case .denied: "denied"
            case .notAllowed: "not_allowed"
            }
        }
    }

    /// What the decoder has seen and done, for the scanner's statistics.
    public struct Statistics: Equatable, Sendable {
        /// Reports given to the decoder, fragments included.
        public internal(set) var reports = 0
        /// Sightings produced.
        public internal(set) var sightings = 0
        /// Extended-report fragments held until their advertisement completes.
        public internal(set) var fragmentsHeld = 0
        /// Telemetry frames kept for their advertiser's next identifying sighting instead of
        /// becoming sightings of their own.
        public internal(set) var telemetryHeld = 0
        /// Sightings that carry telemetry.
        public internal(set) var telemetryAttached = 0
        var frameCounts = [Int](repeating: 0, count: FrameKind.allCases.count)
        var dropCounts = [Int](repeating: 0, count: DropReason.allCases.count)

        /// Complete advertisements whose beacon frame was of `kind`.
        public func frames(_ kind: FrameKind) -> Int { frameCounts[kind.rawValue] }

        /// Reports dropped for `reason`.
        public func drops(_ reason: DropReason) -> Int { dropCounts[reason.rawValue] }

        /// Reports dropped for any reason.
        public var dropped: Int { dropCounts.reduce(0, +) }
    }
}
