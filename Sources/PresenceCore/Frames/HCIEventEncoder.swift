/// Builds HCI LE Meta events from advertising reports: the inverse of `HCIAdvertisingReports`,
/// for captures, fixtures, benchmarks and simulated scanners. The result starts with the event code.
public enum HCIEventEncoder {
    /// An LE Advertising Report event (subevent 0x02) holding `reports` one after another. Each
    /// report's `legacyEventType` (default 0, ADV_IND) and address type byte are written as they are;
    /// a nil RSSI is written as 127. Nil when the reports do not fit one event (255 parameter bytes).
    public static func advertisingReport(_ reports: [AdvertisingReport]) -> [UInt8]? {
        var parameters: [UInt8] = [HCIAdvertisingReports.Codes.advertisingReport, UInt8(truncatingIfNeeded: reports.count)]
        for report in reports {
            guard report.data.count <= 31 else { return nil }
            parameters.append(report.legacyEventType ?? 0)
            parameters.append(report.addressTypeByte)
            parameters.append(contentsOf: report.address.hciBytes)
            parameters.append(UInt8(report.data.count))
            parameters.append(contentsOf: report.data)
            parameters.append(UInt8(bitPattern: report.rssi ?? 127))
        }
        return event(parameters)
    }

    /// An LE Extended Advertising Report event (subevent 0x0D) holding `reports`, each a 24-byte
    /// header then its data; nil RSSI and tx power are written as 127, with no periodic advertising
    /// and no direct address. Nil when the reports do not fit one event.
    public static func extendedAdvertisingReport(_ reports: [AdvertisingReport]) -> [UInt8]? {
        var parameters: [UInt8] = [HCIAdvertisingReports.Codes.extendedAdvertisingReport, UInt8(truncatingIfNeeded: reports.count)]
        for report in reports {
            guard report.data.count <= 229 else { return nil }
            parameters.append(UInt8(truncatingIfNeeded: report.properties.rawValue))
            parameters.append(UInt8(truncatingIfNeeded: report.properties.rawValue >> 8))
            parameters.append(report.addressTypeByte)
            parameters.append(contentsOf: report.address.hciBytes)
            parameters.append(report.primaryPHY)
            parameters.append(report.secondaryPHY)
            parameters.append(report.advertisingSID)
            parameters.append(UInt8(bitPattern: report.txPower ?? 127))
            parameters.append(UInt8(bitPattern: report.rssi ?? 127))
            parameters.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0, 0])
            parameters.append(UInt8(report.data.count))
            parameters.append(contentsOf: report.data)
        }
        return event(parameters)
    }

    private static func event(_ parameters: [UInt8]) -> [UInt8]? {
        guard parameters.count <= 255 else { return nil }
        return [HCIAdvertisingReports.Codes.leMetaEvent, UInt8(parameters.count)] + parameters
    }
}
