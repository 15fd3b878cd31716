import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceStore

struct CalibrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Find each node's RSSI offset from a recorded calibration walk.",
        discussion: """
            While `presencectl record` ran, one person carrying a registered device stood at each beacon for about a minute. \
            For every --at BEACON=FROM..TO (durations from the recording's first line), the readings the nodes anchored at BEACON \
            took of the device are path losses; the first and last 5s of each stay are left out. A node's offset (dB to add to \
            its RSSI) is its median path loss less the median of all nodes' medians; nodes with fewer than 20 readings get none. \
            With --apply, the offsets become the nodes' registered RSSI offsets, pinned, in one transaction.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "A file written by `presencectl record` during the walk.") var file: String
    @Option(help: "The canonical identity of the device the walker carried.") var device: String?
    @Option(help: "The walker's user key: every device of theirs counts.") var user: String?
    @Option(name: .customLong("at"), help: "BEACON=FROM..TO: the walker stood at BEACON from FROM to TO after the first line, such as booth-a=10s..70s.")
    var stays: [String] = []
    @Flag(help: "Write the offsets found as the nodes' RSSI offsets and pin them, in one transaction.") var apply = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (device == nil) != (user == nil) else { throw ValidationError("give exactly one of --device IDENTITY or --user KEY") }
        guard !stays.isEmpty else { throw ValidationError("give at least one --at BEACON=FROM..TO") }
    }

    func run() async throws {
        let stays = try self.stays.map { try WalkCalibration.Stay(parsing: $0, what: "--at") }
        let device = try device.map { try Identity(parsing: $0).text }
        let user = try user.map { try Slug($0, what: "user").value }
        let contents = try LineFile(path: file)
        let registry = try await withDatabase(connection) { try await $0.loadRegistry() }
        let devices = try Self.walkerDevices(device: device, user: user, in: registry)
        var walk = try WalkCalibration(registry: registry, devices: devices, stays: stays)
        try contents.forEachLine { walk.take(line: $0) }
        guard walk.origin != nil else { throw ValueError("file '\(file)' holds no recorded line with an arrival time") }
        let figures = walk.figures()
        var fields = FieldRows(Self.names)
        for figure in figures { fields.append(Self.values(figure)) }
        try fields.print(output.format) { Self.table(figures) }
        let offsets = Dictionary(uniqueKeysWithValues: figures.compactMap { figure in figure.offset.map { (figure.node, $0) } })
        guard offsets.count >= 2 else {
            let ready = figures.filter(\.hasEnoughReadings).count
            throw ValueError("\(ready) node\(ready == 1 ? " has" : "s have") \(WalkCalibration.minimumReadings) readings or more of the walker: at least 2 are needed to compare nodes")
        }
        guard apply else { return }
        for (node, offset) in offsets.sorted(by: { $0.key < $1.key }) {
            _ = try validRSSIOffset(offset, what: "the offset of node '\(node)'")
        }
        try await withDatabase(connection) { try await $0.setNodeOffsets(offsets) }
        StandardStreams.error("applied and pinned the offsets of \(offsets.count) nodes")
    }

    /// The identities the walker carried: the device given, or every device of the user.
    static func walkerDevices(device: String?, user: String?, in registry: Registry) throws -> Set<String> {
        if let device {
            guard registry.devices[device] != nil else {
                throw ValueError("--device '\(device)' is not registered: add it with `presencectl device add \(device) --user USER`")
            }
            return [device]
        }
        let user = user ?? ""
        let devices = Set(registry.devices.values.filter { $0.user == user }.map(\.identity))
        guard !devices.isEmpty else {
            throw ValueError("--user '\(user)' has no registered device: add one with `presencectl device add IDENTITY --user \(user)`")
        }
        return devices
    }

    static func table(_ figures: [WalkCalibration.Figure]) -> String {
        TableOutput.render(header: ["NODE", "BEACON", "READINGS", "MEDIAN LOSS", "SPREAD", "OFFSET"], rows: figures.map { figure in
            let offset = figure.offset.map { decibels($0) }
                ?? (figure.hasEnoughReadings ? "not calibrated: no other node to compare with"
                    : "not calibrated: \(figure.readings) readings, \(WalkCalibration.minimumReadings) needed")
            return [figure.node, figure.beacon, String(figure.readings), figure.median.map { decibels($0) } ?? "-",
                    figure.spread.map { decibels($0) } ?? "-", offset]
        })
    }

    static let names = ["node", "beacon", "readings", "median_path_loss_db", "spread_db", "calibrated", "offset_db", "reason"]

    /// A figure's fields for JSON and CSV; `reason` says why a node got no offset.
    static func values(_ figure: WalkCalibration.Figure) -> [FieldRows.Value?] {
        let reason = figure.offset != nil ? nil
            : figure.hasEnoughReadings ? "no other node to compare with" : "fewer than \(WalkCalibration.minimumReadings) readings"
        return [.text(figure.node), .text(figure.beacon), .integer(Int64(figure.readings)), figure.median.map(FieldRows.Value.number),
                figure.spread.map(FieldRows.Value.number), .flag(figure.offset != nil), figure.offset.map(FieldRows.Value.number),
                reason.map(FieldRows.Value.text)]
    }

    /// dB to two decimals, as written: medians of whole-dB readings are multiples of 0.5.
    static func decibels(_ value: Double) -> String {
        "\((value * 100).rounded() / 100)"
    }
}
