import ArgumentParser
import Logging
import PresenceCLI
import PresenceDatabaseCLI
import PresenceCore
import PresenceStore

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run the engine over a recorded file and print the events it decides, one JSON object per line.",
        discussion: """
            Uses the registry in the database and the same tuning flags as presence-aggregator; writes nothing. \
            After the last line, time runs on until every pending timeout has been decided.
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var tuning: EngineOptions
    @Argument(help: "A file written by `presencectl record`.") var file: String

    func run() async throws {
        var configuration = AggregatorCore.Configuration()
        configuration.pipeline = try tuning.pipelineConfiguration()
        configuration.catchUp = false
        let contents = try LineFile(path: file)
        let registry = try await withDatabase(connection) { try await $0.loadRegistry() }
        var output = BufferedOutput()
        var core: AggregatorCore?
        var lastReceived: Int64 = 0
        var skipped = 0
        var progress = ProgressBar("MB replayed", total: contents.size >> 20)
        var read = 0
        try contents.forEachLine { line in
            read += line.count + 1
            progress.update(read >> 20)
            guard let arrival = Recording.arrival(of: line), SightingLimits.timestampRange.contains(arrival.received) else {
                skipped += 1
                return
            }
            if core == nil {
                core = AggregatorCore(configuration: configuration, registry: registry, now: arrival.received)
            }
            lastReceived = max(lastReceived, arrival.received)
            guard Topics.nodeMessage(in: arrival.topic) != nil else {
                skipped += 1
                return
            }
            core?.receive(topic: arrival.topic, payload: line, at: arrival.received).printEvents(to: &output)
        }
        progress.finish()
        if var core {
            let engine = configuration.pipeline.engine
            let end = lastReceived + configuration.pipeline.lateness + max(engine.absenceTimeout, engine.staleAfter + engine.switchDwell)
                + 2 * configuration.pipeline.tickInterval
            core.tick(at: end).printEvents(to: &output)
            output.flush()
            let c = core.pipeline.counters
            StandardStreams.error("replayed \(c.batches) batches, \(c.sightings) sightings, \(c.observations) observations: \(c.events) events\(skipped > 0 ? "; skipped \(skipped) lines without arrival" : "")")
        } else {
            StandardStreams.error("no recorded batches in \(file)")
        }
    }
}

extension [AggregatorCore.Action] {
    /// Prints the events the actions record, one JSON object per line.
    fileprivate func printEvents(to output: inout BufferedOutput) {
        for case .record(.decided(let decided)) in self {
            for event in decided.events { output.line(event.encoded()) }
        }
    }
}

/// Collects output lines and writes them to standard output in large blocks.
struct BufferedOutput {
    private var buffer: [UInt8] = []

    mutating func line(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        buffer.append(0x0A)
        if buffer.count > 1 << 16 { flush() }
    }

    mutating func flush() {
        StandardStreams.output(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
