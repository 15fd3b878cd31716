import CLibPQ
import Foundation

/// The keyword/value pairs handed to libpq for a configuration, and the scrubbing of secrets from
/// libpq's messages, which can quote the connection string.
enum ConnectionString {
    /// Defaults the URL may override come before `dbname` (libpq expands the URL in its place and
    /// later keywords win): keep-alives and the TCP user timeout. What the adapter relies on comes
    /// after it: UTF-8, a session in UTC with ISO dates so `timestamptz` text can be parsed, and the
    /// statement timeout. This `options` replaces one in the URL.
    static func parameters(_ configuration: PostgresConfiguration) -> [(String, String)] {
        [
            ("keepalives", "1"),
            ("keepalives_idle", "30"),
            ("keepalives_interval", "10"),
            ("keepalives_count", "3"),
            ("tcp_user_timeout", String(configuration.tcpUserTimeout)),
            ("dbname", configuration.url),
            ("application_name", configuration.applicationName),
            ("connect_timeout", String(configuration.connectTimeout)),
            ("client_encoding", "UTF8"),
            ("options", "-c TimeZone=UTC -c DateStyle=ISO" + (configuration.statementTimeout.map { " -c statement_timeout=\($0)" } ?? "")),
        ]
    }

    /// Calls `body` with NULL-terminated keyword and value arrays, as `PQconnectdbParams` and
    /// `PQconnectStartParams` (with `expand_dbname` = 1) take them.
    static func withParameters<R>(
        _ configuration: PostgresConfiguration,
        _ body: ([UnsafePointer<CChar>?], [UnsafePointer<CChar>?]) -> R
    ) throws -> R {
        let pairs = parameters(configuration)
        return try withCStrings(pairs.map(\.0) + [nil]) { keywords in
            try withCStrings(pairs.map(\.1) + [nil]) { values in body(keywords, values) }
        }
    }

    /// The options libpq reads from a URL or conninfo string, nil if it does not parse.
    static func parse(_ url: String) -> [String: String]? {
        guard let options = PQconninfoParse(url, nil) else { return nil }
        defer { PQconninfoFree(options) }
        var parsed: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                parsed[String(cString: keyword)] = String(cString: value)
            }
            option += 1
        }
        return parsed
    }

    /// Replaces the URL and its password (as libpq parsed it, and as written in a URI's user
    /// information, raw and percent-decoded) with `***`.
    static func redactor(for url: String) -> @Sendable (String) -> String {
        var secrets: [String] = [url]
        if let password = parse(url)?["password"] { secrets.append(password) }
        if let scheme = url.range(of: "://") {
            let rest = url[scheme.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                let raw = String(authority[authority.index(after: colon)..<at])
                secrets.append(raw)
                if let decoded = raw.removingPercentEncoding { secrets.append(decoded) }
            }
        }
        let ordered = secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
        return { text in
            ordered.reduce(text) { $0.replacingOccurrences(of: $1, with: "***") }
        }
    }
}
