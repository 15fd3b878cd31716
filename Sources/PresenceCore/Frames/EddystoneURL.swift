/// An Eddystone-URL frame (0x10): a URL scheme code and up to 17 bytes of compressed URL.
public struct EddystoneURL: Hashable, Sendable {
    /// Received power at 0 m, dBm.
    public var txPowerAt0m: Int8
    /// 0 `http://www.`, 1 `https://www.`, 2 `http://`, 3 `https://`.
    public var scheme: UInt8
    /// The compressed URL as sent; `url` expands it.
    public var encoded: ShortBytes

    public init?(txPowerAt0m: Int8, scheme: UInt8, encoded: ShortBytes) {
        guard EddystoneURL.isValid(scheme: scheme, encoded: encoded) else { return nil }
        self.txPowerAt0m = txPowerAt0m
        self.scheme = scheme
        self.encoded = encoded
    }

    private static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    private static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// The URL in full, with the scheme prefix and every expansion code spelled out.
    public var url: String {
        var text = EddystoneURL.schemes[Int(scheme)]
        for index in 0 ..< encoded.count {
            let byte = encoded[index]
            if Int(byte) < EddystoneURL.expansions.count {
                text += EddystoneURL.expansions[Int(byte)]
            } else {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return text
    }

    /// A known scheme, 1 to 17 bytes, each an expansion code (0x00–0x0D) or printable ASCII
    /// (0x21–0x7E); the rest of the byte range is reserved by the specification.
    private static func isValid(scheme: UInt8, encoded: ShortBytes) -> Bool {
        guard Int(scheme) < schemes.count, (1 ... 17).contains(encoded.count) else { return false }
        for index in 0 ..< encoded.count {
            let byte = encoded[index]
            guard byte <= 0x0D || (0x21 ... 0x7E).contains(byte) else { return false }
        }
        return true
    }

    init?(frame span: Span<UInt8>) {
        guard span.count >= 4, span.count <= 20, span[0] == 0x10 else { return nil }
        self.init(txPowerAt0m: Int8(bitPattern: span[1]), scheme: span[2], encoded: ShortBytes(span, 3 ..< span.count))
    }
}
