#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to standard output and error through their file descriptors (the C `stdout` and
/// `stderr` globals are not safe to share under strict concurrency).
public enum StandardStreams {
    public static func error(_ line: String) {
        write(2, Array((line + "\n").utf8))
    }

    /// Writes `text` to standard error as it is (no newline added).
    public static func errorText(_ text: String) {
        write(2, Array(text.utf8))
    }

    public static func output(_ bytes: [UInt8]) {
        write(1, bytes)
    }

    private static func write(_ descriptor: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
