import ArgumentParser
import Logging
import PresenceCLI
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
        let configuration = try tuning.pipelineConfiguration()
        let contents = try LineFile(path: file)
        let registry = try await withDatabase(connection) { try await $0.loadRegistry() }
        var output = BufferedOutput()
        var pipeline: PresencePipeline?
        var lastReceived: Int64 = 0
        var skipped = 0
        try contents.forEachLine { line in
            guard let arrival = Recording.arrival(of: line), SightingLimits.timestampRange.contains(arrival.received) else {
                skipped += 1
                return
            }
            if pipeline == nil {
                pipeline = PresencePipeline(configuration: configuration, registry: registry, start: arrival.received)
            }
            lastReceived = max(lastReceived, arrival.received)
            let events: [PresenceEvent]
            switch Topics.nodeMessage(in: arrival.topic) {
            case .sightings(let node):
                events = pipeline?.receive(line, node: Substring(node), at: arrival.received).events ?? []
            case .status(let node):
                let state = ServiceStatus.state(of: Array(line.bindMemory(to: UInt8.self)))
                events = state.map { pipeline?.receiveStatus(node: Substring(node), online: $0 == .online, at: arrival.received).events ?? [] } ?? []
            case .stats(let node):
                events = pipeline?.receiveStats(node: Substring(node), at: arrival.received).events ?? []
            case nil:
                skipped += 1
                events = []
            }
            for event in events { output.line(event.encoded()) }
        }
        if var pipeline {
            let engine = configuration.engine
            let end = lastReceived + configuration.lateness + max(engine.absenceTimeout, engine.staleAfter + engine.switchDwell) + 2 * configuration.tickInterval
            for event in pipeline.advanceClock(to: end) { output.line(event.encoded()) }
            output.flush()
            let c = pipeline.counters
            StandardStreams.error("replayed \(c.batches) batches, \(c.sightings) sightings, \(c.observations) observations: \(c.events) events\(skipped > 0 ? "; skipped \(skipped) lines without arrival" : "")")
        } else {
            StandardStreams.error("no recorded batches in \(file)")
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
