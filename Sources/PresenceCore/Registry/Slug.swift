/// The key of a node, beacon, user or venue: `[a-z0-9][a-z0-9._-]{0,63}`. Keys appear in MQTT
/// topics, so they never hold `/`, `+`, `#` or upper case.
public struct Slug: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let value: String

    /// Validates `text` as a key; `what` names the kind of key in the error ("user", "beacon").
    public init(_ text: String, what: String = "key") throws(ValueError) {
        guard Slug.isValid(text) else {
            throw ValueError("\(what) key '\(text)' is not valid: expected 1 to 64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
        }
        value = text
    }

    /// Whether `text` is a valid key.
    public static func isValid(_ text: some StringProtocol) -> Bool {
        isValid(utf8: text.utf8)
    }

    /// Whether `bytes` (UTF-8) spell a valid key.
    public static func isValid(utf8 bytes: some Collection<UInt8>) -> Bool {
        guard let first = bytes.first, bytes.count <= 64, isLowerAlphanumeric(first) else { return false }
        return bytes.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    public var description: String { value }
    public static func < (lhs: Slug, rhs: Slug) -> Bool { lhs.value < rhs.value }
}
