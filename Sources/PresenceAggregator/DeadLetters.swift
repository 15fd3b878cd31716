import Foundation
import Logging
import PresenceCore
import Synchronization

/// What the aggregator set aside rather than retry for ever, one JSON object a line in
/// `dead-letters.jsonl` beside its journal: a record the database refused for good (with its
/// events as published), or a message the broker refused (with its reason code). Counted for the
/// stats; each kind logged at most once per 10 s.
final class DeadLetters: Sendable {
    private let path: String
    private let logger: Logger
    private let state = Mutex<(count: Int, limiter: RateLimiter)>((0, RateLimiter()))

    init(directory: String, logger: Logger) {
        path = directory + "/dead-letters.jsonl"
        self.logger = logger
    }

    var count: Int { state.withLock { $0.count } }

    /// A record the database refused with `error`.
    func refusedByDatabase(_ entry: Journal.Entry, error: any Error) {
        var writer = JSONWriter()
        writer.object { w in
            w.member("at", WallClock.milliseconds())
            w.member("refused_by", "database")
            w.member("error", "\(error)")
            w.member("journal_position", Int64(clamping: entry.start))
            w.key("events")
            w.array { w in
                if case .decided(let decided) = entry.record {
                    for message in decided.messages where message.event != nil { w.string(String(decoding: message.payload, as: UTF8.self)) }
                }
            }
        }
        write(writer.bytes, kind: "database", "the database refused a record; it is set aside in the dead letters",
              ["error": "\(error)", "file": "\(path)"])
    }

    /// A message the broker refused with `reason` (an MQTT 5 reason code).
    func refusedByBroker(_ message: OutboundMessage, reason: Int32) {
        var writer = JSONWriter()
        writer.object { w in
            w.member("at", WallClock.milliseconds())
            w.member("refused_by", "broker")
            w.member("reason", Int64(reason))
            w.member("topic", message.topic)
            w.member("retain", message.retain ? 1 : 0)
            w.member("payload", String(decoding: message.payload, as: UTF8.self))
        }
        write(writer.bytes, kind: "broker", "the broker refused a message; it is set aside in the dead letters",
              ["reason": "\(reason)", "topic": "\(message.topic)", "file": "\(path)"])
    }

    private func write(_ line: [UInt8], kind: String, _ message: Logger.Message, _ metadata: Logger.Metadata) {
        let held = state.withLock { state -> Int? in
            state.count += 1
            return state.limiter.admit(kind, at: WallClock.milliseconds())
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: line + [0x0A])
        } catch {
            if FileManager.default.createFile(atPath: path, contents: Data(line + [0x0A])) == false {
                logger.error("cannot write the dead letters", metadata: ["file": "\(path)", "error": "\(error)"])
            }
        }
        if let held {
            var metadata = metadata
            if held > 0 { metadata["suppressed"] = "\(held)" }
            logger.error(message, metadata: metadata)
        }
    }
}
