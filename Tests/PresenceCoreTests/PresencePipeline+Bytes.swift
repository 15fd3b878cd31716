@testable import PresenceCore

extension PresencePipeline {
    /// `receive(_:node:at:catchingUp:)` for a payload the test holds as an array.
    mutating func receive(_ payload: [UInt8], node: Substring, at receivedAt: Int64, catchingUp: Bool = false) -> Outcome {
        payload.withUnsafeBytes { receive($0, node: node, at: receivedAt, catchingUp: catchingUp) }
    }
}
