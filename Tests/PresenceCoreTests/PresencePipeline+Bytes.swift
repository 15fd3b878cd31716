@testable import PresenceCore

extension PresencePipeline {
    /// `receive(_:node:at:)` for a payload the test holds as an array.
    mutating func receive(_ payload: [UInt8], node: Substring, at receivedAt: Int64) -> Outcome {
        payload.withUnsafeBytes { receive($0, node: node, at: receivedAt) }
    }
}
