/// Where a broker is and how to log in: `mqtt://[user[:password]@]host[:port]`, or `mqtts://` for
/// TLS. Ports default to 1883 and 8883; user and password are percent-decoded; an IPv6 host is
/// written in brackets (`mqtt://[::1]:1883`). The description and mirror hide the password.
public struct MQTTURL: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var tls: Bool
    public var username: String?
    public var password: String?

    public init(host: String, port: Int? = nil, tls: Bool = false, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port ?? (tls ? 8883 : 1883)
        self.tls = tls
        self.username = username
        self.password = password
    }

    /// Parses a broker URL; anything else throws an error whose one-line message names the bad
    /// part (never the password).
    public init(parsing text: String) throws(MQTTError) {
        let shown = Self.redacted(text)
        func bad(_ problem: String) -> MQTTError {
            MQTTError(message: "invalid broker URL \(shown): \(problem); expected mqtt://[user[:password]@]host[:port] or mqtts://...")
        }
        guard let separator = text.firstRange(of: "://") else { throw bad("no scheme") }
        let scheme = text[..<separator.lowerBound].lowercased()
        switch scheme {
        case "mqtt": tls = false
        case "mqtts": tls = true
        default: throw bad("scheme \"\(scheme)\" is not mqtt or mqtts")
        }
        var rest = text[separator.upperBound...]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else {
            throw bad("a path, query or fragment is not allowed")
        }

        var hostPort = rest
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            hostPort = rest[rest.index(after: at)...]
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = Self.percentDecoded(parts[0]) else { throw bad("the user name has a bad %-escape") }
            username = user.isEmpty ? nil : user
            if parts.count == 2 {
                guard let secret = Self.percentDecoded(parts[1]) else { throw bad("the password has a bad %-escape") }
                password = secret
                guard username != nil else { throw bad("a password needs a user name") }
            } else {
                password = nil
            }
        } else {
            username = nil
            password = nil
        }

        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw bad("unclosed \"[\" in the host") }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad("unexpected \"\(after)\" after the host") }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = String(hostPort[..<colon])
            portText = hostPort[hostPort.index(after: colon)...]
        } else {
            host = String(hostPort)
        }
        guard !host.isEmpty else { throw bad("the host is empty") }
        guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" || $0 == ":" }) else {
            throw bad("host \"\(host)\" has characters a host name cannot have")
        }
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else {
                throw bad("port \"\(portText)\" is not a number in 1...65535")
            }
            port = number
        } else {
            port = tls ? 8883 : 1883
        }
    }

    /// Decodes `%XX` escapes as UTF-8; nil for a malformed escape or invalid UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The text with whatever follows the first `:` of its user info replaced by `***`, for messages.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.firstRange(of: "://").map(\.upperBound) ?? text.startIndex
        guard start <= at, let colon = text[start..<at].firstIndex(of: ":") else { return text }
        return text[...colon] + "***" + text[at...]
    }
}

extension MQTTURL: CustomStringConvertible, CustomReflectable {
    /// The URL with the password shown as `***`.
    public var description: String {
        var text = tls ? "mqtts://" : "mqtt://"
        if let username {
            text += username
            if password != nil { text += ":***" }
            text += "@"
        }
        text += host.contains(":") ? "[\(host)]" : host
        return text + ":\(port)"
    }

    /// A mirror without the password, so that `dump` and debuggers do not print it.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "host": host, "port": port, "tls": tls, "username": username as Any,
            "password": password == nil ? "nil" : "***",
        ])
    }
}
