import PresenceCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files that hold a credential or a TLS file a program was pointed at: read or checked once, at
/// start, with a one-line error naming the file; a secret's content never appears in a message.
package enum SecretFile {
    /// The first line of `path`, without its line ending; an empty line is refused.
    package static func firstLine(of path: String, what: String) throws -> String {
        guard let file = fopen(path, "r") else {
            throw ValueError("\(what) '\(path)' cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        while bytes.count <= 4_096 {
            let c = getc(file)
            if c == EOF || c == 0x0A { break }
            bytes.append(UInt8(truncatingIfNeeded: c))
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty, bytes.count <= 4_096 else {
            throw ValueError("\(what) '\(path)' is not valid: expected the secret on its first line (at most 4096 bytes)")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Refuses a file that cannot be opened for reading.
    package static func requireReadable(_ path: String, what: String) throws {
        guard let file = fopen(path, "r") else {
            throw ValueError("\(what) '\(path)' cannot be read: \(String(cString: strerror(errno)))")
        }
        fclose(file)
    }
}
