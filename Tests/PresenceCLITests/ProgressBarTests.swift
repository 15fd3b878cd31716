import PresenceCLI
import Testing

@Suite struct ProgressBarTests {
    @Test func theBarFillsWithWhatIsDoneAndNeverOverflows() {
        #expect(ProgressBar.line("beacons", done: 0, total: 200, width: 10) == "[----------]   0%  0/200 beacons")
        #expect(ProgressBar.line("beacons", done: 50, total: 200, width: 10) == "[##--------]  25%  50/200 beacons")
        #expect(ProgressBar.line("beacons", done: 250, total: 200, width: 10) == "[##########] 100%  200/200 beacons")
        #expect(ProgressBar.line("beacons", done: -5, total: 200, width: 10) == "[----------]   0%  0/200 beacons")
    }
}
