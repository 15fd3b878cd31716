/// How a venue's sightings are split between aggregators (the contract's sharding): a venue has
/// `count` shards (1 to 1,024; 1 by default), and a device's sightings travel on
/// `{p}/v1/sightings/{node}/{shard}`, `shard` being FNV-1a (32-bit) of the device's canonical
/// identity modulo `count` (a carried scanner's: of `node:<key>`, so that all it hears stays
/// together). With one shard, batches travel on `{p}/v1/sightings/{node}` as before.
public struct Shards: Sendable, Equatable {
    public static let maximum = 1_024

    public let count: Int

    /// One shard: today's topics.
    public static let one = Shards(valid: 1)

    private init(valid count: Int) {
        self.count = count
    }

    /// `count` shards; a `ValueError` naming it when it is not 1 to 1,024.
    public init(count: Int) throws(ValueError) {
        guard (1 ... Self.maximum).contains(count) else {
            throw ValueError("shard count \(count) is not valid: expected 1 to \(Self.maximum)")
        }
        self.count = count
    }

    /// The shard of a device's canonical identity.
    public func shard(of identity: String) -> Int {
        count == 1 ? 0 : Int(Self.fnv1a32(identity) % UInt32(count))
    }

    /// FNV-1a, 32 bits, of the identity's UTF-8 bytes: offset basis 0x811C9DC5, prime 0x01000193.
    public static func fnv1a32(_ text: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hash
    }

    /// `batch` in parts, one per shard its sightings fall in, by shard; a batch without sightings
    /// (a node's heartbeat) is one part on shard 0. With one shard, the batch whole. A carried
    /// scanner (`carriedBy` its key) puts everything on the shard of `node:<key>`.
    public func parts(of batch: SightingBatch, carriedBy node: String? = nil) -> [(shard: Int, batch: SightingBatch)] {
        if count == 1 { return [(0, batch)] }
        if let node { return [(shard(of: "node:" + node), batch)] }
        guard !batch.sightings.isEmpty else { return [(0, batch)] }
        var split: [Int: [Sighting]] = [:]
        for sighting in batch.sightings { split[shard(of: sighting.id), default: []].append(sighting) }
        return split.keys.sorted().map { shard in
            var part = batch
            part.sightings = split[shard] ?? []
            return (shard, part)
        }
    }
}

/// The venue's configuration for nodes, retained on `{p}/v1/config`: `{"v":1,"shards":S}`.
public struct VenueConfig: Sendable, Equatable {
    public var shards: Shards

    public init(shards: Shards) {
        self.shards = shards
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("shards", shards.count)
        }
        return writer.bytes
    }

    /// The configuration a payload states, or nil when it states none (a shard count out of range
    /// included).
    public init?(payload: [UInt8]) {
        var count: Int64?
        let read: Bool = payload.withUnsafeBytes { bytes in
            var reader = JSONReader(bytes)
            do throws(JSONReader.Failure) {
                try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                    if key.is("shards"), try reader.peekKind() == .number { count = try reader.readInteger() } else { try reader.skipValue() }
                }
                try reader.expectEnd()
                return true
            } catch {
                return false
            }
        }
        guard read, let count, let shards = try? Shards(count: Int(clamping: count)) else { return nil }
        self.shards = shards
    }
}
