/// A canonical radio identity, as the contract spells it: `ibeacon:<uuid>:<major>:<minor>`,
/// `altbeacon:<uuid>:<id2>:<id3>`, `eddystone:<namespace>:<instance>`, `mac:<address>`,
/// `node:<key>` or `espresense:<id>` (an ESPresense node's id for a device that carries no
/// identity of the other kinds, such as `irk:…` or `apple:…`, as the node writes it); or a region above beacons (`ibeacon:<uuid>`, `ibeacon:<uuid>:<major>`, likewise for
/// AltBeacon, and `eddystone:<namespace>`). Hex is lower case; numbers are decimal without leading zeros.
public struct Identity: Hashable, Sendable, CustomStringConvertible {
    /// The canonical text.
    public let text: String
    public let kind: Kind
    /// Whether this names a region (a prefix of full identities) rather than one radio.
    public let isRegion: Bool

    /// The families of identities.
    public enum Kind: String, Sendable, CaseIterable {
        case ibeacon, altbeacon, eddystone, mac, node, espresense
    }

    public var description: String { text }

    /// Parses `input`, accepting upper-case hex and leading zeros and returning the canonical form.
    /// Regions are refused unless `allowRegion`; `node:` identities unless `allowNode`.
    public init(parsing input: String, allowRegion: Bool = false, allowNode: Bool = true) throws(ValueError) {
        let parts = input.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let scheme = parts.first.flatMap({ Kind(rawValue: $0.lowercased()) }) else {
            throw ValueError("identity '\(input)' is not valid: expected ibeacon:, altbeacon:, eddystone:, mac:, node: or espresense: followed by its fields")
        }
        let fields = Array(parts.dropFirst())
        var canonical: [String] = [scheme.rawValue]
        switch scheme {
        case .ibeacon, .altbeacon:
            guard (1 ... 3).contains(fields.count) else {
                throw ValueError("identity '\(input)' is not valid: expected \(scheme.rawValue):<uuid>:<\(scheme == .ibeacon ? "major" : "id2")>:<\(scheme == .ibeacon ? "minor" : "id3")>")
            }
            canonical.append(try Identity.uuid(fields[0], in: input))
            let names = scheme == .ibeacon ? ["major", "minor"] : ["id2", "id3"]
            for (index, field) in fields.dropFirst().enumerated() {
                canonical.append(try Identity.uint16(field, name: names[index], in: input))
            }
            isRegion = fields.count < 3
        case .eddystone:
            guard (1 ... 2).contains(fields.count) else {
                throw ValueError("identity '\(input)' is not valid: expected eddystone:<namespace, 20 hex>:<instance, 12 hex>")
            }
            canonical.append(try Identity.hex(fields[0], digits: 20, name: "namespace", in: input))
            if fields.count == 2 {
                canonical.append(try Identity.hex(fields[1], digits: 12, name: "instance", in: input))
            }
            isRegion = fields.count < 2
        case .mac:
            guard fields.count == 6 else {
                throw ValueError("identity '\(input)' is not valid: expected mac:aa:bb:cc:dd:ee:ff")
            }
            for field in fields {
                canonical.append(try Identity.hex(field, digits: 2, name: "address byte", in: input))
            }
            isRegion = false
        case .espresense:
            let id = fields.joined(separator: ":")
            guard Identity.isForeignID(id.utf8) else {
                throw ValueError("identity '\(input)' is not valid: expected espresense:<id>, the id as an ESPresense node reports it (1 to \(Identity.maximumForeignID) printable ASCII characters, no spaces)")
            }
            canonical.append(id)
            isRegion = false
        case .node:
            guard allowNode else {
                throw ValueError("identity '\(input)' is not valid here: a node identity only registers a scanner node as a device")
            }
            guard fields.count == 1, Slug.isValid(fields[0]) else {
                throw ValueError("identity '\(input)' is not valid: expected node:<node key>, the key being 1 to 64 characters of a-z, 0-9, '.', '_' or '-'")
            }
            canonical.append(fields[0])
            isRegion = false
        }
        if isRegion, !allowRegion {
            throw ValueError("identity '\(input)' is a region, but a single device identity was expected (all fields, such as \(scheme.rawValue == "eddystone" ? "the instance" : "major and minor"))")
        }
        kind = scheme
        text = canonical.joined(separator: ":")
    }

    /// The regions this identity belongs to, most specific first, itself excluded: for
    /// `ibeacon:u:1:2` these are `ibeacon:u:1` and `ibeacon:u`.
    public var enclosingRegions: [String] {
        Identity.enclosingRegions(of: text)
    }

    /// The regions above a canonical identity text, most specific first (none for `mac:` and `node:`).
    public static func enclosingRegions(of text: String) -> [String] {
        guard text.hasPrefix("ibeacon:") || text.hasPrefix("altbeacon:") || text.hasPrefix("eddystone:") else { return [] }
        var regions: [String] = []
        var current = Substring(text)
        let minimumColons = 1
        while let colon = current.lastIndex(of: ":") {
            current = current[..<colon]
            if current.filter({ $0 == ":" }).count < minimumColons { break }
            regions.append(String(current))
        }
        return regions
    }

    /// The longest foreign id an `espresense:` identity carries, in bytes.
    public static let maximumForeignID = 128

    /// Whether `bytes` can be a foreign id: 1 to `maximumForeignID` printable ASCII characters
    /// (`!` to `~`), kept as the foreign system wrote them.
    public static func isForeignID(_ bytes: some Collection<UInt8>) -> Bool {
        (1 ... maximumForeignID).contains(bytes.count) && bytes.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    private static func uuid(_ field: String, in input: String) throws(ValueError) -> String {
        let lower = field.lowercased()
        let groups = lower.split(separator: "-", omittingEmptySubsequences: false)
        let valid = groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
        guard valid else {
            throw ValueError("UUID '\(field)' in identity '\(input)' is not valid: expected 32 hex digits as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")
        }
        return lower
    }

    private static func uint16(_ field: String, name: String, in input: String) throws(ValueError) -> String {
        guard !field.isEmpty, field.count <= 6, field.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(field), value <= 65535 else {
            throw ValueError("\(name) '\(field)' in identity '\(input)' is not valid: expected a whole number from 0 to 65535")
        }
        return String(value)
    }

    private static func hex(_ field: String, digits: Int, name: String, in input: String) throws(ValueError) -> String {
        let lower = field.lowercased()
        guard lower.count == digits, lower.allSatisfy({ $0.isASCII && $0.isHexDigit }) else {
            throw ValueError("\(name) '\(field)' in identity '\(input)' is not valid: expected \(digits) hex digits")
        }
        return lower
    }
}
