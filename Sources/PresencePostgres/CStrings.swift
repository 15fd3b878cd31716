import Foundation

/// Calls `body` with C copies of `strings` (nil stays a NULL pointer), freed when it returns.
/// libpq copies what it needs, so the pointers only have to live for the call.
func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) throws -> R) throws -> R {
    var copies: [UnsafeMutablePointer<CChar>?] = []
    copies.reserveCapacity(strings.count)
    defer { copies.forEach { free($0) } }
    for string in strings {
        guard let string else {
            copies.append(nil)
            continue
        }
        guard let copy = strdup(string) else {
            throw PostgresError(kind: .usage, message: "out of memory copying a parameter")
        }
        copies.append(copy)
    }
    return try body(copies.map { $0.map { UnsafePointer($0) } })
}
