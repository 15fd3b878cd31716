import ArgumentParser
import Logging
import PresenceCLI
import PresenceDatabaseCLI
import PresenceCore
import PresenceStore

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run the aggregator's core over a recorded file and print the events it decides, one JSON object per line.",
        discussion: """
            Uses the registry in the database and the same tuning and foreign-node flags as presence-aggregator; writes nothing. \
            After the last line, time runs on until every pending timeout has been decided. \
            --print messages prints every message the aggregator would publish (with --ha-discovery, Home Assistant's too), \
            one JSON object per line: {"topic":…,"retain":…,"payload":"…"}. --print zone-events prints the zone events, \
            --print all-events the beacons' and the zones' in the order published. --print feed prints the venue page's event feed \
            at the end, as its /api/events?after=0&limit=1000 answers.
            """)

    /// What to print.
    enum Output: String, ExpressibleByArgument, CaseIterable {
        case events, messages, feed
        case zoneEvents = "zone-events", allEvents = "all-events"
    }

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var tuning: EngineOptions
    @OptionGroup var homeAssistant: HomeAssistantOptions
    @OptionGroup var foreign: ForeignOptions
    @Option(name: .customLong("print"), help: "What to print: events (the default), zone-events, all-events, messages, or feed.") var output = Output.events
    @Argument(help: "A file written by `presencectl record`.") var file: String

    func run() async throws {
        var configuration = AggregatorCore.Configuration()
        configuration.pipeline = try tuning.pipelineConfiguration()
        configuration.topics = try connection.topics()
        configuration.homeAssistant = try homeAssistant.configuration(pipeline: configuration.topics)
        configuration.foreign = try foreign.topics()
        configuration.page = output == .feed
        configuration.catchUp = false
        let contents = try LineFile(path: file)
        let registry = try await withDatabase(connection) { try await $0.loadRegistry() }
        var output = ReplayOutput(printing: output)
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
                var started = AggregatorCore(configuration: configuration, registry: registry, now: arrival.received)
                output.take(started.resume(at: arrival.received))
                core = started
            }
            lastReceived = max(lastReceived, arrival.received)
            var topic = arrival.topic
            let foreignTopic = !configuration.foreign.isEmpty && topic.withUTF8 { configuration.foreign.match(UnsafeRawBufferPointer($0)) != nil }
            guard foreignTopic || Topics.nodeMessage(in: arrival.topic) != nil else {
                skipped += 1
                return
            }
            if let text = Recording.text(of: line) {
                output.take(text.withUnsafeBytes { core?.receive(topic: arrival.topic, payload: $0, at: arrival.received) } ?? [])
            } else {
                output.take(core?.receive(topic: arrival.topic, payload: line, at: arrival.received) ?? [])
            }
        }
        progress.finish()
        guard var core else {
            StandardStreams.error("no recorded batches in \(file)")
            return
        }
        let engine = configuration.pipeline.engine
        let end = lastReceived + configuration.pipeline.lateness + max(engine.absenceTimeout, engine.staleAfter + engine.switchDwell)
            + 2 * configuration.pipeline.tickInterval
        output.take(core.tick(at: end))
        output.take(core.finish(at: end))
        if self.output == .feed { output.line(core.pageEventsJSON(after: 0, limit: 1_000)) }
        output.flush()
        let c = core.pipeline.counters
        StandardStreams.error("replayed \(c.batches) batches, \(c.sightings) sightings, \(c.observations) observations: \(c.events) events\(skipped > 0 ? "; skipped \(skipped) lines without arrival" : "")")
    }
}

/// Prints what a replay's actions publish, as `--print` asks, in large blocks.
struct ReplayOutput {
    let printing: ReplayCommand.Output
    private var buffer: [UInt8] = []

    init(printing: ReplayCommand.Output) {
        self.printing = printing
    }

    /// The events' payloads (as published, encoded once by the core), or every message.
    mutating func take(_ actions: [AggregatorCore.Action]) {
        for case .record(.decided(let decided)) in actions {
            switch printing {
            case .events:
                for message in decided.messages where message.event != nil { line(message.payload) }
            case .zoneEvents:
                for message in decided.messages where message.zoneEvent != nil { line(message.payload) }
            case .allEvents:
                for message in decided.messages where message.event != nil || message.zoneEvent != nil { line(message.payload) }
            case .messages:
                for message in decided.messages {
                    var w = JSONWriter()
                    w.object { w in
                        w.member("topic", message.topic)
                        w.key("retain")
                        w.bool(message.retain)
                        w.member("payload", String(decoding: message.payload, as: UTF8.self))
                    }
                    line(w.bytes)
                }
            case .feed:
                break
            }
        }
    }

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
