/// The topics of foreign scanner nodes the aggregator reads, each under the other system's own
/// prefix: ESPresense's (`--espresense`) and OpenMQTTGateway's or Theengs Gateway's, which publish
/// the same way (`--openmqttgateway`, `--theengs`).
///
/// - ESPresense: `{prefix}/devices/{id}/{room}` (`ESPresenseReport`), and the room's retained
///   `{prefix}/rooms/{room}/status`, `online` or `offline` (its will).
/// - The gateways: `{prefix}/{gateway}/BTtoMQTT/{address}` (`GatewayAdvertisement`), and the
///   gateway's retained `{prefix}/{gateway}/LWT`, `online` or `offline` (its will).
///
/// A room or gateway is the node whose key is its name (`nodeKey(for:)`).
public struct ForeignTopics: Sendable, Equatable {
    public private(set) var espresense: String?
    /// The gateways' prefixes, each once.
    public private(set) var gateways: [String] = []
    /// What the topics begin with, as bytes: `{espresense}/devices/` and `{espresense}/rooms/`, and
    /// `{gateway}/` for each gateway prefix.
    private var espresenseLevels: (devices: [UInt8], rooms: [UInt8])?
    private var gatewayLevels: [[UInt8]] = []

    /// None.
    public init() {}

    /// Validates each prefix as `Topics` does; `flags` name them in errors.
    public init(espresense: String?, openMQTTGateway: String?, theengs: String?) throws(ValueError) {
        for (prefix, flag) in [(espresense, "--espresense"), (openMQTTGateway, "--openmqttgateway"), (theengs, "--theengs")] {
            guard let prefix else { continue }
            try Topics.validate(prefix: prefix, what: "\(flag) topic prefix", example: flag == "--espresense" ? "'espresense'" : "'home'")
        }
        self.espresense = espresense
        espresenseLevels = espresense.map { (Array("\($0)/devices/".utf8), Array("\($0)/rooms/".utf8)) }
        for prefix in [openMQTTGateway, theengs].compactMap({ $0 }) where !gateways.contains(prefix) { gateways.append(prefix) }
        gatewayLevels = gateways.map { Array("\($0)/".utf8) }
    }

    public static func == (lhs: ForeignTopics, rhs: ForeignTopics) -> Bool {
        lhs.espresense == rhs.espresense && lhs.gateways == rhs.gateways
    }

    public var isEmpty: Bool { espresense == nil && gateways.isEmpty }

    /// The subscriptions that hear them, at QoS 0 (what these nodes publish at).
    public var subscriptions: [String] {
        var filters: [String] = []
        if let espresense { filters += ["\(espresense)/devices/+/+", "\(espresense)/rooms/+/status"] }
        for prefix in gateways { filters += ["\(prefix)/+/BTtoMQTT/+", "\(prefix)/+/LWT"] }
        return filters
    }

    /// What a topic carries, as the aggregator reads it, and where the room's or gateway's name
    /// lies in the topic's bytes.
    public struct Match: Equatable, Sendable {
        public enum Kind: Equatable, Sendable {
            /// An ESPresense room's report of one device.
            case espresenseReport
            /// A gateway's report of one advertisement.
            case gatewayAdvertisement
            /// A room's or gateway's status (its will).
            case status
        }

        public var kind: Kind
        public var node: Range<Int>
    }

    /// What `topic` (its UTF-8 bytes) carries, or nil when it is none of these. Read over the
    /// bytes where they lie: it runs once per foreign message.
    public func match(_ topic: UnsafeRawBufferPointer) -> Match? {
        Self.match(topic, espresense: espresenseLevels, gateways: gatewayLevels)
    }

    private static func match(_ bytes: UnsafeRawBufferPointer, espresense: (devices: [UInt8], rooms: [UInt8])?, gateways: [[UInt8]]) -> Match? {
        let slash = UInt8(ascii: "/")
        func level(from start: Int) -> Range<Int> {
            var end = start
            while end < bytes.count, bytes[end] != slash { end += 1 }
            return start ..< end
        }
        if let espresense {
            if bytes.starts(with: espresense.devices) {
                // {id}/{room}: two levels, neither empty.
                let id = level(from: espresense.devices.count)
                guard !id.isEmpty, id.upperBound < bytes.count else { return nil }
                let room = level(from: id.upperBound + 1)
                guard !room.isEmpty, room.upperBound == bytes.count else { return nil }
                return Match(kind: .espresenseReport, node: room)
            }
            if bytes.starts(with: espresense.rooms) {
                let room = level(from: espresense.rooms.count)
                guard !room.isEmpty, UnsafeRawBufferPointer(rebasing: bytes[room.upperBound...]).elementsEqual("/status".utf8) else { return nil }
                return Match(kind: .status, node: room)
            }
        }
        for prefix in gateways where bytes.starts(with: prefix) {
            let gateway = level(from: prefix.count)
            guard !gateway.isEmpty, gateway.upperBound < bytes.count else { continue }
            let rest = UnsafeRawBufferPointer(rebasing: bytes[(gateway.upperBound + 1)...])
            if rest.elementsEqual("LWT".utf8) { return Match(kind: .status, node: gateway) }
            if let address = rest.dropping(prefix: "BTtoMQTT/"), !address.isEmpty, !address.contains(slash) {
                return Match(kind: .gatewayAdvertisement, node: gateway)
            }
        }
        return nil
    }

    /// The node key a foreign room or gateway name stands for: the name itself when it is a key;
    /// otherwise in lower case, with each character other than a-z, 0-9, `.`, `_` and `-` as `-`
    /// (`Living Room` → `living-room`, `OpenMQTTGateway` → `openmqttgateway`). Nil when that makes
    /// no key (empty, longer than 64, or starting with `.`, `_` or `-`).
    public static func nodeKey(for name: Substring) -> Substring? {
        if Slug.isValid(name) { return name }
        var key = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "a" ... "z", "0" ... "9", ".", "_", "-": key.unicodeScalars.append(scalar)
            case "A" ... "Z": key.unicodeScalars.append(Unicode.Scalar(scalar.value + 32) ?? scalar)
            default: key.append("-")
            }
        }
        return Slug.isValid(key) ? Substring(key) : nil
    }

    /// `nodeKey(for:)` of a name given as the topic's bytes (the name itself, without a String
    /// made of anything else, when it is a key).
    public static func nodeKey(for name: UnsafeRawBufferPointer) -> String? {
        if Slug.isValid(utf8: name) { return String(decoding: name, as: UTF8.self) }
        return nodeKey(for: Substring(String(decoding: name, as: UTF8.self))).map(String.init)
    }

    /// Whether a foreign status payload says online (`online`, any case, spaces around), offline
    /// (`offline`), or neither (nil).
    public static func isOnline(_ payload: UnsafeRawBufferPointer) -> Bool? {
        var text = Substring(String(decoding: payload.prefix(16), as: UTF8.self))
        while text.first?.isWhitespace ?? false { text = text.dropFirst() }
        while text.last?.isWhitespace ?? false { text = text.dropLast() }
        switch text.lowercased() {
        case "online": return true
        case "offline": return false
        default: return nil
        }
    }
}
