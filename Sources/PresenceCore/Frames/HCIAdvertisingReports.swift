/// The advertising reports in one HCI event packet (bytes from the event code on, after any H4 0x04
/// byte): LE Meta (0x3E) subevents LE Advertising Report (0x02) and LE Extended Advertising Report
/// (0x0D). Every other event yields nothing. Reports are laid out one after another, as Linux and
/// btmon read them: a legacy report's RSSI follows its data, and the next report starts right after
/// it. A declared length longer than the bytes present is read as far as the bytes go; a report that
/// does not fit whole ends the walk (`isTruncated`). Nothing outside the packet is read.
public struct HCIAdvertisingReports: Sequence, IteratorProtocol {
    /// HCI event codes and LE Meta subevents this reads.
    public enum Codes {
        public static let leMetaEvent: UInt8 = 0x3E
        public static let advertisingReport: UInt8 = 0x02
        public static let extendedAdvertisingReport: UInt8 = 0x0D
        public static let commandComplete: UInt8 = 0x0E
        public static let commandStatus: UInt8 = 0x0F
    }

    private let packet: ArraySlice<UInt8>
    private let subevent: UInt8
    private let end: Int
    private var position: Int
    private var remaining: Int
    /// Whether the walk stopped at a report that runs past the end of the event.
    public private(set) var isTruncated = false

    public init(event packet: ArraySlice<UInt8>) {
        self.packet = packet
        let start = packet.startIndex
        guard packet.count >= 4, packet[start] == Codes.leMetaEvent else {
            (subevent, end, position, remaining) = (0, start, start, 0)
            return
        }
        subevent = packet[start + 2]
        end = Swift.min(packet.endIndex, start + 2 + Int(packet[start + 1]))
        remaining = Int(packet[start + 3])
        position = start + 4
        if subevent != Codes.advertisingReport && subevent != Codes.extendedAdvertisingReport {
            remaining = 0
        }
    }

    public init(event packet: [UInt8]) {
        self.init(event: packet[...])
    }

    public mutating func next() -> AdvertisingReport? {
        guard remaining > 0 else { return nil }
        remaining -= 1
        let parsed = subevent == Codes.advertisingReport
            ? HCIAdvertisingReports.legacyReport(in: packet, at: position, end: end)
            : HCIAdvertisingReports.extendedReport(in: packet, at: position, end: end)
        guard let (report, next) = parsed else {
            isTruncated = true
            remaining = 0
            return nil
        }
        position = next
        return report
    }

    /// `Event_Type(1) Address_Type(1) Address(6) Data_Length(1) Data RSSI(1)`; the report and where
    /// the next one starts, or nil when it does not fit before `end`.
    private static func legacyReport(in packet: ArraySlice<UInt8>, at position: Int, end: Int) -> (AdvertisingReport, Int)? {
        guard end - position >= 10 else { return nil }
        let span = packet.span
        let base = position - packet.startIndex
        let length = Int(span[base + 8])
        guard end - position >= 10 + length else { return nil }
        let eventType = span[base]
        let rssi = Int8(bitPattern: span[base + 9 + length])
        let report = AdvertisingReport(
            properties: AdvertisingEventProperties(legacyEventType: eventType),
            legacyEventType: eventType,
            addressTypeByte: span[base + 1],
            address: BluetoothAddress(hciBytes: span, at: base + 2),
            rssi: rssi == 127 ? nil : rssi,
            data: packet[position + 9 ..< position + 9 + length])
        return (report, position + 10 + length)
    }

    /// A 24-byte header (see `c-libraries.md` 4.2), then `Data_Length` bytes of data; the report and
    /// where the next one starts, or nil when it does not fit before `end`.
    private static func extendedReport(in packet: ArraySlice<UInt8>, at position: Int, end: Int) -> (AdvertisingReport, Int)? {
        guard end - position >= 24 else { return nil }
        let span = packet.span
        let base = position - packet.startIndex
        let length = Int(span[base + 23])
        guard end - position >= 24 + length else { return nil }
        let txPower = Int8(bitPattern: span[base + 12])
        let rssi = Int8(bitPattern: span[base + 13])
        let report = AdvertisingReport(
            properties: AdvertisingEventProperties(rawValue: span.uint16LittleEndian(at: base)),
            addressTypeByte: span[base + 2],
            address: BluetoothAddress(hciBytes: span, at: base + 3),
            rssi: rssi == 127 ? nil : rssi,
            txPower: txPower == 127 ? nil : txPower,
            advertisingSID: span[base + 11],
            primaryPHY: span[base + 9],
            secondaryPHY: span[base + 10],
            data: packet[position + 24 ..< position + 24 + length])
        return (report, position + 24 + length)
    }
}
