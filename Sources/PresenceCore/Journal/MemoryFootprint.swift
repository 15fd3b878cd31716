/// About how much memory a value holds on the heap: each array's buffer by its capacity and each
/// string too long to be stored inline, with Swift's 32-byte object header, rounded up to malloc's
/// 16 bytes. An estimate, for bounding a cache by what it costs rather than by what its values take
/// encoded (a user's state holds about three times its journal frame). A string shared with
/// another value (a user key from the registry) is counted as if it were the value's own.
public enum MemoryFootprint {
    /// A heap buffer of `bytes` bytes after its header.
    public static func buffer(_ bytes: Int) -> UInt64 {
        UInt64((32 + max(0, bytes) + 15) & ~15)
    }

    /// An array's buffer (nothing when it has none); its elements' own buffers are not counted.
    public static func array<Element>(_ array: [Element]) -> UInt64 {
        array.capacity == 0 ? 0 : buffer(array.capacity * MemoryLayout<Element>.stride)
    }

    /// A string's buffer: none for up to 15 UTF-8 bytes, which are stored inline.
    public static func string(_ string: String) -> UInt64 {
        let count = string.utf8.count
        return count <= 15 ? 0 : buffer(count + 1)
    }

    /// A string that may be absent.
    public static func string(_ string: String?) -> UInt64 {
        string.map(Self.string) ?? 0
    }
}

extension OutboundRecord {
    /// About how much memory the record holds on the heap (`MemoryFootprint`); the value itself,
    /// wherever it is stored, is not counted.
    public var memoryFootprint: UInt64 {
        typealias Footprint = MemoryFootprint
        switch self {
        case .decided(let decided):
            var bytes = Footprint.array(decided.messages) + Footprint.array(decided.notifications)
            for message in decided.messages {
                bytes += Footprint.string(message.topic) + Footprint.array(message.payload)
                if let event = message.event {
                    bytes += Footprint.string(event.id) + Footprint.string(event.user) + Footprint.string(event.device)
                        + Footprint.string(event.beacon) + Footprint.string(event.venue)
                }
                if let event = message.zoneEvent {
                    bytes += Footprint.string(event.id) + Footprint.string(event.user) + Footprint.string(event.device)
                        + Footprint.string(event.zone) + Footprint.string(event.venue) + Footprint.string(event.beacon)
                }
            }
            for notification in decided.notifications {
                bytes += Footprint.string(notification.user) + Footprint.string(notification.beacon) + Footprint.string(notification.message)
            }
            return bytes
        case .progress(let progress):
            return progress.lastSeen.reduce(Footprint.array(progress.lastSeen)) { $0 + Footprint.string($1.user) }
        case .erased(let users):
            return users.reduce(Footprint.array(users)) { $0 + Footprint.string($1) }
        }
    }
}
