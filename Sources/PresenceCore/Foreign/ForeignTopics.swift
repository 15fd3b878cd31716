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

    /// None.
    public init() {}

    /// Validates each prefix as `Topics` does; `flags` name them in errors.
    public init(espresense: String?, openMQTTGateway: String?, theengs: String?) throws(ValueError) {
        for (prefix, flag) in [(espresense, "--espresense"), (openMQTTGateway, "--openmqttgateway"), (theengs, "--theengs")] {
            guard let prefix else { continue }
            try Topics.validate(prefix: prefix, what: "\(flag) topic prefix", example: flag == "--espresense" ? "'espresense'" : "'home'")
        }
        self.espresense = espresense
        for prefix in [openMQTTGateway, theengs].compactMap({ $0 }) where !gateways.contains(prefix) { gateways.append(prefix) }
    }

    public var isEmpty: Bool { espresense == nil && gateways.isEmpty }

    /// The subscriptions that hear them, at QoS 0 (what these nodes publish at).
    public var subscriptions: [String] {
        var filters: [String] = []
        if let espresense { filters += ["\(espresense)/devices/+/+", "\(espresense)/rooms/+/status"] }
        for prefix in gateways { filters += ["\(prefix)/+/BTtoMQTT/+", "\(prefix)/+/LWT"] }
        return filters
    }

    /// What a foreign node publishes, as the aggregator reads it; `node` is the room's or gateway's
    /// name as written in the topic.
    public enum Message: Equatable, Sendable {
        case espresenseReport(node: Substring)
        case gatewayAdvertisement(node: Substring)
        case status(node: Substring)
    }

    /// What `topic` carries, or nil when it is none of these. Read over the topic's UTF-8 bytes:
    /// it runs once per foreign message.
    public func message(in topic: String) -> Message? {
        let bytes = topic.utf8
        if let espresense, let rest = bytes.levels(after: espresense.utf8) {
            if let devices = rest.levels(after: "devices".utf8) {
                // {id}/{room}: two levels, neither empty.
                guard let slash = devices.firstIndex(of: UInt8(ascii: "/")), slash != devices.startIndex else { return nil }
                let room = devices[devices.index(after: slash)...]
                guard !room.isEmpty, !room.contains(UInt8(ascii: "/")) else { return nil }
                return .espresenseReport(node: topic[room.startIndex ..< room.endIndex])
            }
            if let rooms = rest.levels(after: "rooms".utf8), let room = rooms.levels(before: "status".utf8), !room.isEmpty,
               !room.contains(UInt8(ascii: "/")) {
                return .status(node: topic[room.startIndex ..< room.endIndex])
            }
        }
        for prefix in gateways {
            guard let rest = bytes.levels(after: prefix.utf8), let slash = rest.firstIndex(of: UInt8(ascii: "/")), slash != rest.startIndex else { continue }
            let gateway = topic[rest.startIndex ..< slash]
            let after = rest[rest.index(after: slash)...]
            if after.elementsEqual("LWT".utf8) { return .status(node: gateway) }
            if let address = after.levels(after: "BTtoMQTT".utf8), !address.isEmpty, !address.contains(UInt8(ascii: "/")) {
                return .gatewayAdvertisement(node: gateway)
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

extension Collection where Element == UInt8 {
    /// What follows `head` and a `/` at the start, when the topic begins with those levels.
    func levels(after head: some Collection<UInt8>) -> SubSequence? {
        guard starts(with: head) else { return nil }
        let rest = dropFirst(head.count)
        guard rest.first == UInt8(ascii: "/") else { return nil }
        return rest.dropFirst()
    }
}

extension BidirectionalCollection where Element == UInt8 {
    /// What comes before a `/` and `tail` at the end, when the topic ends with that level.
    func levels(before tail: some BidirectionalCollection<UInt8>) -> SubSequence? {
        guard reversed().starts(with: tail.reversed()) else { return nil }
        let rest = dropLast(tail.count)
        guard rest.last == UInt8(ascii: "/") else { return nil }
        return rest.dropLast()
    }
}
