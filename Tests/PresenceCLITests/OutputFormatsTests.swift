import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import PresenceCLI
import PresenceCore
import PresenceTestSupport
import Testing


@Suite struct OutputFormatsTests {
    static let awkward = ["plain", "comma, inside", "quote \" inside", "line\nfeed", "carriage\rreturn", "crlf\r\nboth", "", " spaced ", "é ünïcode"]

    @Test func csvFollowsRFC4180AndReadsBackExactly() throws {
        let text = try CSVOutput.render(header: ["a", "b"], rows: Self.awkward.map { [$0, "x"] })
        #expect(text.hasSuffix("x\r\n"), "every record ends in CRLF, the last one too")
        #expect(text.hasPrefix("a,b\r\nplain,x\r\n\"comma, inside\",x\r\n\"quote \"\" inside\",x\r\n"))
        #expect(RFC4180.records(text) == [["a", "b"]] + Self.awkward.map { [$0, "x"] })
        #expect(try CSVOutput.render(header: ["only"], rows: []) == "only\r\n", "no rows: the header alone")
    }

    @Test func fieldRowsWriteTheSameFieldsAsJSONAndCSV() throws {
        var rows = FieldRows(["user", "at", "dwell", "n", "open", "left", "gone"])
        rows.append([.text("a,\"b\""), .time(1_763_774_734_050), .number(55.956), .integer(3), .flag(true), .null, nil])
        rows.append([.text("c"), .time(0), .number(2), .integer(-1), .flag(false), .text("x"), .text("y")])
        #expect(rows.jsonLines == """
            {"user":"a,\\"b\\"","at":1763774734050,"dwell":55.96,"n":3,"open":true,"left":null}
            {"user":"c","at":0,"dwell":2,"n":-1,"open":false,"left":"x","gone":"y"}

            """)
        #expect(try rows.csv() == "user,at,dwell,n,open,left,gone\r\n\"a,\"\"b\"\"\",2025-11-22T01:25:34.050Z,55.96,3,true,,\r\n"
            + "c,1970-01-01T00:00:00.000Z,2,-1,false,x,y\r\n")
    }

    static let times: [(String, Int64)] = [
        ("2026-11-22", 1_795_305_600_000),
        ("2026-11-22T10:30:00Z", 1_795_343_400_000),
        ("2026-11-22 10:30", 1_795_343_400_000),
        ("2026-11-22T10:30:00.25Z", 1_795_343_400_250),
        ("2026-11-22T11:30:00+01:00", 1_795_343_400_000),
        ("2026-11-22T05:00:00-0530", 1_795_343_400_000),
        ("2024-02-29T23:59:59.999Z", 1_709_251_199_999),
        ("1970-01-01T00:00:00Z", 0),
    ]

    @Test(arguments: times)
    func timesAreReadAsUTCUnlessAnOffsetIsGiven(_ text: String, _ expected: Int64) throws {
        #expect(try TimeText.milliseconds(text, what: "--at") == expected)
    }

    static let badTimes = ["yesterday", "2026-13-01", "2026-02-29", "2026-11-22T24:00", "2026-11-22T10", "2026-11-22T10:30:00.Z",
                           "2026-11-22T10:30Zulu", "2026-11-22T10:30+1", "22/11/2026", "", "2026-11-22T10:30:00.1234567890Z"]

    @Test(arguments: badTimes)
    func badTimesAreRefusedNamingTheValue(_ text: String) {
        #expect(throws: ValueError.self) { try TimeText.milliseconds(text, what: "--at") }
        do {
            _ = try TimeText.milliseconds(text, what: "--at")
        } catch {
            #expect("\(error)".contains("--at '\(text)'"))
        }
    }

    @Test func aDayIsADateAlone() throws {
        #expect(try TimeText.day("2026-11-22", what: "--day") == 1_795_305_600_000)
        #expect(throws: ValueError.self) { try TimeText.day("2026-11-22T10:00Z", what: "--day") }
        #expect(TimeText.date(1_795_343_400_000) == "2026-11-22")
    }

    @Test func elapsedTimeReadsToTheSecond() {
        #expect(ElapsedText.format(seconds: 42.4) == "42s")
        #expect(ElapsedText.format(seconds: 232) == "3m 52s")
        #expect(ElapsedText.format(seconds: 7510) == "2h 05m 10s")
        #expect(ElapsedText.format(seconds: .nan) == "-")
    }

    @Test func theChartCarriesEveryBarsNumbersAndATitle() {
        let t0: Int64 = 1_795_343_400_000  // 2026-11-22T10:30:00Z
        let bars = [VisitsChart.Bar(beacon: "booth-b", bucket: t0, count: 3), VisitsChart.Bar(beacon: "booth-a", bucket: t0 + 3_600_000, count: 1),
                    VisitsChart.Bar(beacon: "booth-a", bucket: t0, count: 7)]
        let svg = VisitsChart.svg(bars: bars, width: 1_800_000, title: "Visitors <per> beacon", subtitle: "a & b")
        #expect(ChartBars.bars(in: svg) == [
            "booth-a|2026-11-22T10:30:00.000Z|7|booth-a 2026-11-22 10:30–11:00 UTC: 7 visitors",
            "booth-a|2026-11-22T11:30:00.000Z|1|booth-a 2026-11-22 11:30–12:00 UTC: 1 visitor",
            "booth-b|2026-11-22T10:30:00.000Z|3|booth-b 2026-11-22 10:30–11:00 UTC: 3 visitors",
        ])
        #expect(svg.contains("Visitors &lt;per&gt; beacon") && svg.contains("a &amp; b"))
        #expect(svg.contains(">12:00</text>") && svg.contains(">2026-11-22</text>"), "round hours are labelled, with the date")
        // Shared scale: the tallest bar is the full height, the others in proportion.
        let heights = svg.matches(of: #/class="bar"[^>]* height="([0-9.]+)"/#).compactMap { Double($0.1) }
        #expect(heights == [42, 6, 18])
        #expect(XMLParser(data: Data(svg.utf8)).parse(), "well-formed XML")
    }

    @Test func anEmptyChartSaysSo() {
        let svg = VisitsChart.svg(bars: [], width: 1_800_000, title: "t", subtitle: "s")
        #expect(ChartBars.bars(in: svg).isEmpty && svg.contains("No visits in this period."))
        #expect(XMLParser(data: Data(svg.utf8)).parse())
    }

    @Test func beaconsAreInKeyOrderWithNumbersByValue() {
        let bars = ["booth-10", "booth-2", "annex", "booth-1"].map { VisitsChart.Bar(beacon: $0, bucket: 0, count: 1) }
        let order = ChartBars.bars(in: VisitsChart.svg(bars: bars, width: 1_800_000, title: "t", subtitle: "s")).map { $0.prefix { $0 != "|" } }
        #expect(order == ["annex", "booth-1", "booth-2", "booth-10"])
    }
}
