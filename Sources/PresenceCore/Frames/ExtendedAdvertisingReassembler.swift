/// Joins the fragments of an extended advertisement. A controller delivers a long advertisement as
/// several extended reports from the same address and advertising set (SID): every one but the last
/// says "incomplete, more to come"; the last says complete, or truncated when the controller gave up.
/// Feed every report in order; complete advertisements come out whole. Pure and bounded: at most
/// `maximumPending` chains and `maximumLength` bytes each; a chain that outgrows them is discarded.
public struct ExtendedAdvertisingReassembler: Sendable {
    private struct Key: Hashable {
        let address: UInt64
        let addressType: UInt8
        let sid: UInt8
    }

    private struct Chain {
        let key: Key
        var data: [UInt8]
        var sequence: Int
    }

    /// The largest advertising data the Core spec allows for one advertisement.
    public static let maximumAdvertisingDataLength = 1650

    private var chains: [Chain] = []
    private var sequence = 0
    public let maximumPending: Int
    public let maximumLength: Int
    /// Chains given up on: too long, or evicted to make room for a newer one.
    public private(set) var discarded = 0

    public init(maximumPending: Int = 16, maximumLength: Int = ExtendedAdvertisingReassembler.maximumAdvertisingDataLength) {
        self.maximumPending = max(1, maximumPending)
        self.maximumLength = maximumLength
    }

    /// Chains waiting for their next fragment.
    public var pendingCount: Int { chains.count }

    /// The report to decode now: a complete report as it came, the last fragment of a chain carrying
    /// the data of all its fragments (and the last fragment's header and status), or nil while more
    /// is to come. Legacy reports pass through.
    public mutating func add(_ report: AdvertisingReport) -> AdvertisingReport? {
        if report.properties.contains(.legacy) { return report }
        let key = Key(address: report.address.rawValue, addressType: report.addressTypeByte, sid: report.advertisingSID)
        let index = chains.firstIndex { $0.key == key }
        if report.dataStatus == .incomplete {
            sequence += 1
            if let index {
                chains[index].data.append(contentsOf: report.data)
                chains[index].sequence = sequence
                if chains[index].data.count > maximumLength {
                    chains.remove(at: index)
                    discarded += 1
                }
            } else {
                if chains.count >= maximumPending, let oldest = chains.indices.min(by: { chains[$0].sequence < chains[$1].sequence }) {
                    chains.remove(at: oldest)
                    discarded += 1
                }
                if report.data.count <= maximumLength {
                    chains.append(Chain(key: key, data: Array(report.data), sequence: sequence))
                } else {
                    discarded += 1
                }
            }
            return nil
        }
        guard let index else { return report }
        var data = chains.remove(at: index).data
        data.append(contentsOf: report.data)
        guard data.count <= maximumLength else {
            discarded += 1
            return nil
        }
        var whole = report
        whole.data = data[...]
        return whole
    }
}
