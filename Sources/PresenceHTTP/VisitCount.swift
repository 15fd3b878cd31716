import PresenceCore

/// Unique visitors at one beacon in one bucket (30 minutes), for the page's visits chart.
public struct VisitCount: Sendable, Equatable {
    public var beacon: String
    /// The bucket's start, ms since the Unix epoch.
    public var bucket: Int64
    public var visitors: Int

    public init(beacon: String, bucket: Int64, visitors: Int) {
        self.beacon = beacon
        self.bucket = bucket
        self.visitors = visitors
    }

    static func encode(_ counts: [VisitCount], since: Int64) -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.object { w in
            w.member("v", 1)
            w.member("since", since)
            w.member("bucket_ms", 1_800_000)
            w.key("visits")
            w.array { w in
                for count in counts {
                    w.object { w in
                        w.member("beacon", count.beacon)
                        w.member("bucket", count.bucket)
                        w.member("visitors", count.visitors)
                    }
                }
            }
        }
        return w.bytes
    }
}
