import Foundation
@testable import PresenceCore

/// What the core's actions publish, read back for tests: the messages of its records, and the
/// JSON objects of those on a topic (or below a topic prefix).
enum Published {
    static func records(_ actions: [AggregatorCore.Action]) -> [OutboundRecord.Decided] {
        actions.compactMap { action in if case .record(.decided(let decided)) = action { decided } else { nil } }
    }

    static func messages(_ actions: [AggregatorCore.Action]) -> [OutboundMessage] {
        records(actions).flatMap(\.messages)
    }

    /// The messages on topics that start with `prefix`, as JSON objects (an empty payload: an empty object).
    static func objects(_ messages: [OutboundMessage], on prefix: String) -> [[String: Any]] {
        messages.filter { $0.topic.hasPrefix(prefix) }.map { message in
            (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any] ?? [:]
        }
    }
}
