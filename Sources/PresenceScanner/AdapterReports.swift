import PresenceBLE
import PresenceCore
import ServiceLifecycle

/// The reports of a node with a radio: the HCI events its adapter's scan reads, and a tick for
/// each 100 ms with none. On graceful shutdown it turns the scan off, and ends once the events
/// read before are handed on.
public struct AdapterReports: ReportSource {
    public let nodes: [String]
    public let adapter: String
    public let form: ReportForm
    private let scanner: HCIScanner

    /// The reports of `scanner` (which scans already) as node `node`'s, decoded with `options`.
    public init(node: String, scanner: HCIScanner, options: AdvertisementDecoder.Options) {
        nodes = [node]
        adapter = scanner.configuration.adapter
        form = .hciEvents(options)
        self.scanner = scanner
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(node: nodes[0], scanner: scanner, packets: scanner.packets.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        let node: String
        let scanner: HCIScanner
        var packets: AsyncStream<HCIPacket>.Iterator

        public mutating func next() async -> TimedReport? {
            let scanner = scanner
            let packet = await withGracefulShutdownHandler {
                await packets.next()
            } onGracefulShutdown: {
                scanner.stop()
            }
            guard let packet else { return nil }
            return packet.bytes.isEmpty ? .tick : .hciEvent(packet.bytes[...], ts: packet.time, node: node)
        }
    }
}
