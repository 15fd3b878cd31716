/// The bars of a visits chart (`VisitsChart`), read from its SVG by a pattern of its own.
public enum ChartBars {
    /// The bars of a chart as its attributes give them: beacon, bucket (ISO 8601) and count.
    public static func bars(in svg: String) -> [String] {
        let pattern = #/<rect class="bar"[^>]* data-beacon="([^"]*)" data-bucket="([^"]*)" data-count="([0-9]+)"><title>([^<]*)</title>/#
        return svg.matches(of: pattern).map { "\($0.1)|\($0.2)|\($0.3)|\($0.4)" }
    }
}
