import Foundation

/// Unique visitors per beacon per time bucket drawn as SVG bar charts, as the Gluecon app showed
/// them: one small chart per beacon (in key order, numbers by value: booth-2 before booth-10), one
/// under the other on a shared time axis (UTC) and a shared scale, so that booths compare at a glance. Every bar carries its numbers for machines
/// (`data-beacon`, `data-bucket` in ISO 8601, `data-count`) and a `<title>` for people.
public enum VisitsChart {
    /// One bucket of one beacon.
    public struct Bar: Sendable, Equatable {
        public let beacon: String
        /// The bucket's start, epoch milliseconds.
        public let bucket: Int64
        public let count: Int

        public init(beacon: String, bucket: Int64, count: Int) {
            self.beacon = beacon
            self.bucket = bucket
            self.count = count
        }
    }

    static let left = 150.0
    static let right = 24.0
    static let top = 72.0
    static let bottom = 44.0
    static let panelHeight = 58.0
    static let barsHeight = 42.0

    /// The chart of `bars`, buckets `width` milliseconds long, under `title` and `subtitle`.
    public static func svg(bars: [Bar], width bucketWidth: Int64, title: String, subtitle: String) -> String {
        let beacons = Set(bars.map(\.beacon)).sorted { $0.compare($1, options: .numeric) == .orderedAscending }
        guard let first = bars.map(\.bucket).min(), let last = bars.map(\.bucket).max(), bucketWidth > 0 else {
            return document(width: 640, height: 120, title: title, subtitle: subtitle,
                            body: [#"<text x="24" y="96" fill="rgb(85,85,85)">No visits in this period.</text>"#])
        }
        let columns = Int((last - first) / bucketWidth) + 1
        let slot = min(18, max(3, 720 / Double(columns)))
        let plotWidth = Double(columns) * slot
        let tallest = max(1, bars.map(\.count).max() ?? 1)
        let height = top + Double(beacons.count) * panelHeight + bottom
        let x = { (time: Int64) in left + Double(time - first) / Double(bucketWidth) * slot }

        var body: [String] = []
        let ticks = ticks(from: first, to: last + bucketWidth, bucketWidth: bucketWidth, slot: slot)
        body.append(#"<g class="grid" stroke="rgb(228,228,228)">"#)
        for tick in ticks.times {
            body.append(#"<line x1="\#(n(x(tick)))" y1="\#(n(top))" x2="\#(n(x(tick)))" y2="\#(n(height - bottom + 4))"/>"#)
        }
        body.append("</g>")
        // The time axis under the charts, and its clock again above them for tall charts.
        body.append(#"<g class="axis" fill="rgb(51,51,51)" text-anchor="middle">"#)
        var previousDay = ""
        for tick in ticks.times {
            let stamp = Timestamps.iso8601(tick)
            let day = String(stamp.prefix(10))
            let label = ticks.step % 86_400_000 == 0 ? day : String(stamp.dropFirst(11).prefix(5))
            body.append(#"<text x="\#(n(x(tick)))" y="\#(n(top - 4))" fill="rgb(119,119,119)">\#(label)</text>"#)
            body.append(#"<text x="\#(n(x(tick)))" y="\#(n(height - bottom + 18))">\#(label)</text>"#)
            if day != previousDay, ticks.step % 86_400_000 != 0 {
                body.append(#"<text x="\#(n(x(tick)))" y="\#(n(height - bottom + 32))" fill="rgb(119,119,119)">\#(day)</text>"#)
            }
            previousDay = day
        }
        body.append("</g>")

        let byBeacon = Dictionary(grouping: bars, by: \.beacon)
        for (index, beacon) in beacons.enumerated() {
            let baseline = top + Double(index) * panelHeight + barsHeight + 6
            let own = (byBeacon[beacon] ?? []).sorted { $0.bucket < $1.bucket }
            let key = escaped(beacon)
            body.append(#"<g class="beacon" data-beacon="\#(key)">"#)
            body.append(#"<text x="12" y="\#(n(baseline - 20))" font-weight="bold">\#(key)</text>"#)
            body.append(#"<text x="12" y="\#(n(baseline - 6))" fill="rgb(119,119,119)">peak \#(own.map(\.count).max() ?? 0)</text>"#)
            body.append(#"<line x1="\#(n(left))" y1="\#(n(baseline))" x2="\#(n(left + plotWidth))" y2="\#(n(baseline))" stroke="rgb(153,153,153)"/>"#)
            for bar in own where bar.count > 0 {
                let barHeight = max(1, Double(bar.count) / Double(tallest) * barsHeight)
                let start = Timestamps.iso8601(bar.bucket)
                let span = "\(start.prefix(10)) \(start.dropFirst(11).prefix(5))–\(Timestamps.iso8601(bar.bucket + bucketWidth).dropFirst(11).prefix(5)) UTC"
                body.append(#"<rect class="bar" x="\#(n(x(bar.bucket) + slot * 0.1))" y="\#(n(baseline - barHeight))" "#
                    + #"width="\#(n(slot * 0.8))" height="\#(n(barHeight))" fill="rgb(59,117,175)" data-beacon="\#(key)" "#
                    + #"data-bucket="\#(start)" data-count="\#(bar.count)"><title>\#(key) \#(span): \#(bar.count) "#
                    + #"visitor\#(bar.count == 1 ? "" : "s")</title></rect>"#)
            }
            body.append("</g>")
        }
        return document(width: left + plotWidth + right, height: height, title: title, subtitle: subtitle, body: body)
    }

    /// Grid lines on round times (every hour, three hours, a day...) at least 64 px apart.
    static func ticks(from start: Int64, to end: Int64, bucketWidth: Int64, slot: Double) -> (step: Int64, times: [Int64]) {
        let minute: Int64 = 60_000
        let candidates = [15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080].map { $0 * minute }
        let step = candidates.first { $0 % bucketWidth == 0 && Double($0 / bucketWidth) * slot >= 64 }
            ?? bucketWidth * Int64((64 / slot).rounded(.up))
        var time = (start / step + (start % step > 0 ? 1 : 0)) * step
        var times: [Int64] = []
        while time <= end {
            times.append(time)
            time += step
        }
        return (step, times)
    }

    static func document(width: Double, height: Double, title: String, subtitle: String, body: [String]) -> String {
        ([#"<?xml version="1.0" encoding="UTF-8"?>"#,
          #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(n(width))" height="\#(n(height))" viewBox="0 0 \#(n(width)) \#(n(height))" "#
              + #"font-family="DejaVu Sans, Arial, sans-serif" font-size="11">"#,
          #"<rect width="100%" height="100%" fill="white"/>"#,
          #"<text x="12" y="24" font-size="15" font-weight="bold">\#(escaped(title))</text>"#,
          #"<text x="12" y="44" fill="rgb(85,85,85)">\#(escaped(subtitle))</text>"#]
            + body + ["</svg>"]).joined(separator: "\n") + "\n"
    }

    /// A coordinate to one decimal, without a trailing `.0`.
    static func n(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int64(tenths / 10)) : String(tenths / 10)
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
