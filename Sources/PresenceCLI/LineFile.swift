import PresenceCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file read line by line in large blocks, so that a day's recording needs no more memory than
/// its longest line.
public struct LineFile {
    public let path: String

    /// Opens `path`, or says why it cannot be read.
    public init(path: String) throws {
        guard let file = fopen(path, "rb") else {
            throw ValueError("file '\(path)' cannot be read: \(String(cString: strerror(errno)))")
        }
        fclose(file)
        self.path = path
    }

    /// The file's size in bytes, 0 when it cannot be told.
    public var size: Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : 0
    }

    /// Calls `body` with each non-empty line, without its newline, in order.
    public func forEachLine(_ body: (UnsafeRawBufferPointer) -> Void) throws {
        guard let file = fopen(path, "rb") else {
            throw ValueError("file '\(path)' cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 4 << 20)
        var filled = 0
        var ended = false
        while !ended {
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress.map { $0 + filled }, 1, $0.count - filled, file) }
            if count == 0 {
                if ferror(file) != 0 { throw ValueError("file '\(path)' cannot be read: \(String(cString: strerror(errno)))") }
                ended = true
            }
            filled += count
            let consumed = buffer.withUnsafeBytes { all -> Int in
                var start = 0
                guard let base = all.baseAddress else { return 0 }
                while start < filled {
                    guard let newline = memchr(base + start, 0x0A, filled - start) else {
                        if ended { body(UnsafeRawBufferPointer(rebasing: all[start ..< filled])) }
                        return ended ? filled : start
                    }
                    let end = UnsafeRawPointer(newline) - base
                    if end > start { body(UnsafeRawBufferPointer(rebasing: all[start ..< end])) }
                    start = end + 1
                }
                return start
            }
            buffer.withUnsafeMutableBytes { all in
                if consumed > 0, consumed < filled, let base = all.baseAddress { memmove(base, base + consumed, filled - consumed) }
            }
            filled -= consumed
        }
    }
}
