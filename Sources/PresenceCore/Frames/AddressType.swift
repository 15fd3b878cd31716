/// What kind of address an advertiser used, from the report's address type byte and, for random
/// addresses, the top two bits of the most significant address byte (Core spec Vol 6 Part B 1.3).
public enum AddressType: Hashable, Sendable {
    /// A public device address (IEEE-assigned). Address type 0x00.
    case `public`
    /// A random static address (top bits `11`): fixed at least until the device power-cycles.
    case randomStatic
    /// A resolvable private address (top bits `01`): rotates, resolvable only with the device's IRK.
    case resolvablePrivate
    /// A non-resolvable private address (top bits `00`): rotates and cannot be resolved.
    case nonResolvablePrivate
    /// A random address with the reserved top bits `10`.
    case reservedRandom
    /// A public identity address the controller resolved from a resolvable private address (0x02).
    case resolvedPublic
    /// A random static identity address the controller resolved from a resolvable private address (0x03).
    case resolvedRandomStatic
    /// No address was sent (extended advertising, address type 0xFF).
    case anonymous
    /// An address type byte this code does not know.
    case unknown(UInt8)

    /// Classifies an address from the report's address type byte.
    public init(typeByte: UInt8, address: BluetoothAddress) {
        switch typeByte {
        case 0x00: self = .public
        case 0x01:
            switch address.mostSignificantByte >> 6 {
            case 0b11: self = .randomStatic
            case 0b01: self = .resolvablePrivate
            case 0b00: self = .nonResolvablePrivate
            default: self = .reservedRandom
            }
        case 0x02: self = .resolvedPublic
        case 0x03: self = .resolvedRandomStatic
        case 0xFF: self = .anonymous
        default: self = .unknown(typeByte)
        }
    }

    /// Whether the address names one device over time: public, random static, or an identity
    /// address the controller resolved. Only these make useful `mac:` identities.
    public var isStable: Bool {
        switch self {
        case .public, .randomStatic, .resolvedPublic, .resolvedRandomStatic: true
        default: false
        }
    }

    /// Whether the address is one that rotates to protect the device's privacy.
    public var isRotating: Bool {
        self == .resolvablePrivate || self == .nonResolvablePrivate
    }
}
