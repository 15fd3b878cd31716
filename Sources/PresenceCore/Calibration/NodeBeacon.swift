/// The iBeacon a node transmits for self-calibration (`presence-scanner --advertise`): the
/// project's UUID with a major and minor derived from the node's key, so that any node or the
/// aggregator knows, from the key alone, which node a heard node beacon belongs to; nothing is
/// registered by hand. Two keys share an identity with odds of one in four billion.
public enum NodeBeacon {
    /// The proximity UUID every node beacon carries.
    public static let uuid = "6f0b5c1e-8d3a-4c7e-9b21-70726573656e"

    /// The identity (`ibeacon:UUID:MAJOR:MINOR`) of `node`'s beacon.
    public static func identity(of node: String) -> String {
        let hash = SipHash24.hash(Array(node.utf8), key: SipHash24.Key(k0: 0x6e6f_6465_6265_6163, k1: 0x6f6e_2d70_7265_7365))
        return "ibeacon:\(uuid):\(UInt16(truncatingIfNeeded: hash >> 16)):\(UInt16(truncatingIfNeeded: hash))"
    }
}
