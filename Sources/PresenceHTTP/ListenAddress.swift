/// Where the HTTP server listens: `ADDR:PORT` (`127.0.0.1:8080`, `0.0.0.0:8080`, `[::1]:8080`,
/// `localhost:8080`); port 0 picks a free port, which the server logs.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Nil unless `text` is a host, a colon and a port from 0 to 65535.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0 ... 65_535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == " " || $0 == "[" || $0 == "]" }) else { return nil }
        self.host = host
        self.port = port
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
