/// A value from outside (a flag, a registry entry, a payload field) that is not what was expected.
/// The message names the value and what was expected, in one line a person can act on.
public struct ValueError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
