import ArgumentParser
import PresenceCLI
import PresenceDatabaseCLI
import PresenceCore
import PresenceStore

struct VenueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "venue", abstract: "Add, update or remove venues.",
                                                    subcommands: [Add.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a venue, or update it if the key exists.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The venue's key.") var key: String
        @Option(help: "A name to show.") var name: String?

        func run() async throws {
            let key = try Slug(key, what: "venue")
            try await withDatabase(connection) { try await $0.upsertVenue(key: key, name: name) }
            print("venue \(key)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a venue that has no beacons or nodes.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The venue's key.") var key: String

        func run() async throws {
            let key = try Slug(key, what: "venue")
            try await withDatabase(connection) { try await $0.removeVenue(key) }
            print("removed venue \(key)")
        }
    }
}

struct ZoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "zone", abstract: "Add, update or remove zones (places within places).",
                                                    subcommands: [Add.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a zone, or update it if the key exists (given fields only).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The zone's key.") var key: String
        @Option(help: "The venue it belongs to.") var venue: String?
        @Option(help: "A name to show.") var name: String?
        @Option(help: "The zone it lies in (a floor holding a hall, a hall holding a booth's zone).") var parent: String?

        func run() async throws {
            let key = try Slug(key, what: "zone")
            let venue = try venue.map { try Slug($0, what: "venue").value }
            let parent = try parent.map { try Slug($0, what: "zone").value }
            if parent == key.value { throw ValueError("--parent '\(key)' is not valid: a zone cannot lie inside itself") }
            let zone = Registry.Zone(key: key.value, venue: venue, name: name, parent: parent)
            try await withDatabase(connection) { try await $0.upsertZone(zone) }
            print("zone \(key)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a zone; stays in it end, and what it held lies in no zone.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The zone's key.") var key: String

        func run() async throws {
            let key = try Slug(key, what: "zone")
            try await withDatabase(connection) { try await $0.removeZone(key) }
            print("removed zone \(key)")
        }
    }
}

/// Coordinates given on the command line: x and y together, floor optional.
struct PlaceOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "X coordinate, metres.") var x: Double?
    @Option(parsing: .unconditional, help: "Y coordinate, metres.") var y: Double?
    @Option(parsing: .unconditional, help: "Floor number.") var floor: Int?

    func validate() throws {
        guard (x == nil) == (y == nil) else {
            throw ValueError("--x and --y go together: got only \(x == nil ? "--y \(y ?? 0)" : "--x \(x ?? 0)")")
        }
        for (name, value) in [("--x", x), ("--y", y)] {
            if let value, !value.isFinite || abs(value) > 1_000_000 {
                throw ValueError("\(name) \(value) is not valid: expected metres within ±1000000")
            }
        }
    }
}

func validTx(_ tx: Int?, flag: String = "--tx") throws -> Int? {
    guard let tx else { return nil }
    guard SightingLimits.txRange.contains(tx) else {
        throw ValueError("\(flag) \(tx) is not valid: expected dBm at 1 m from -127 to 20")
    }
    return tx
}

/// An RSSI offset within what a node may be given: dB from -50 to 50.
func validRSSIOffset(_ offset: Double?, what: String = "--rssi-offset") throws -> Double? {
    guard let offset else { return nil }
    guard offset.isFinite && abs(offset) <= 50 else {
        throw ValueError("\(what) \(offset) is not valid: expected dB from -50 to 50")
    }
    return offset
}

struct BeaconCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "beacon", abstract: "Add, update or remove beacons (places).",
                                                    subcommands: [Add.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a beacon, or update it if the key exists (given fields only).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The beacon's key.") var key: String
        @Option(name: .customLong("id"), help: "Radio identity or region (ibeacon:<uuid>[:<major>[:<minor>]], altbeacon:..., eddystone:..., mac:...).")
        var identity: String?
        @Option(help: "The venue it belongs to.") var venue: String?
        @Option(help: "The zone it lies in.") var zone: String?
        @Option(help: "A name to show.") var name: String?
        @OptionGroup var place: PlaceOptions
        @Option(parsing: .unconditional, help: "Beyond this estimated distance (m) nobody counts as at the beacon.") var radius: Double?
        @Option(parsing: .unconditional, help: "Calibrated power at 1 m of the beacon's radio, dBm (overrides the frames).") var tx: Int?
        @Option(help: "Message sent to a user who arrives.") var hello: String?
        @Option(help: "Message sent to a user who leaves.") var goodbye: String?
        @Option(parsing: .unconditional, help: "The margin (dB) a move to or from this beacon needs at least (a sticky desk, a door).")
        var switchMargin: Double?
        @Option(help: "The dwell a move to or from this beacon needs at least, such as 5s.") var switchDwell: String?
        @Option(help: "How long after the last sighting a session here times out, such as 30s.") var absenceTimeout: String?
        @Flag(help: "Make the margin, dwell and timeout follow the aggregator's flags again.") var clearPolicy = false
        @Option(help: "Beacons next to this one, comma-separated: a move between beacons that are not neighbours needs more evidence.")
        var nextTo: [String] = []
        @Option(help: "Beacons no longer next to this one, comma-separated.") var notNextTo: [String] = []

        func run() async throws {
            let key = try Slug(key, what: "beacon")
            let venue = try venue.map { try Slug($0, what: "venue").value }
            let zone = try zone.map { try Slug($0, what: "zone").value }
            let identity = try identity.map { try Identity(parsing: $0, allowRegion: true, allowNode: false).text }
            if let radius, !(radius > 0 && radius.isFinite) {
                throw ValueError("--radius \(radius) is not valid: expected metres above 0")
            }
            if let switchMargin, !(switchMargin >= 0 && switchMargin <= 100) {
                throw ValueError("--switch-margin \(switchMargin) is not valid: expected dB from 0 to 100")
            }
            let day: Int64 = 86_400_000
            let dwell = try switchDwell.map { try DurationText.milliseconds($0, what: "--switch-dwell") }
            if let dwell, dwell > day { throw ValueError("--switch-dwell '\(switchDwell ?? "")' is not valid: expected at most 1d") }
            let timeout = try absenceTimeout.map { try DurationText.milliseconds($0, what: "--absence-timeout") }
            if let timeout, !(1...day).contains(timeout) {
                throw ValueError("--absence-timeout '\(absenceTimeout ?? "")' is not valid: expected a duration above 0 and at most 1d")
            }
            if clearPolicy, switchMargin != nil || dwell != nil || timeout != nil {
                throw ValueError("--clear-policy cannot be given with --switch-margin, --switch-dwell or --absence-timeout")
            }
            let add = try BeaconCommand.keys(nextTo, option: "--next-to")
            let remove = try BeaconCommand.keys(notNextTo, option: "--not-next-to")
            let beacon = Registry.Beacon(key: key.value, venue: venue, name: name, identity: identity, x: place.x, y: place.y,
                                         floor: place.floor, radius: radius, tx: try validTx(tx), hello: hello, goodbye: goodbye,
                                         switchMargin: switchMargin, switchDwell: dwell, absenceTimeout: timeout, zone: zone)
            try await withDatabase(connection) {
                try await $0.upsertBeacon(beacon, clearPolicy: clearPolicy, addNeighbours: add, removeNeighbours: remove)
            }
            print("beacon \(key)")
        }
    }

    /// Beacon keys from repeated, comma-separated option values.
    private static func keys(_ values: [String], option: String) throws -> [String] {
        try values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }.map {
            do { return try Slug(String($0), what: "beacon").value } catch { throw ValueError("\(option) '\($0)' is not valid: expected beacon keys, comma-separated") }
        }
    }
}

extension BeaconCommand {
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a beacon; sessions there end.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The beacon's key.") var key: String

        func run() async throws {
            let key = try Slug(key, what: "beacon")
            try await withDatabase(connection) { try await $0.removeBeacon(key) }
            print("removed beacon \(key)")
        }
    }
}

struct NodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "node", abstract: "Add, update, pin or remove scanner nodes.",
                                                    subcommands: [Add.self, Remove.self, Pin.self, Unpin.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a node, or update it if the key exists (given fields only).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The node's key.") var key: String
        @Option(help: "The venue it belongs to.") var venue: String?
        @Option(help: "The beacon (place) it stands at; tags it hears are near that beacon.") var beacon: String?
        @OptionGroup var place: PlaceOptions
        @Option(parsing: .unconditional, help: "Added to every RSSI the node reports, dB; pins the node (self-calibration leaves it alone).")
        var rssiOffset: Double?

        func run() async throws {
            let key = try Slug(key, what: "node")
            let venue = try venue.map { try Slug($0, what: "venue").value }
            let beacon = try beacon.map { try Slug($0, what: "beacon").value }
            let rssiOffset = try validRSSIOffset(rssiOffset)
            let node = Registry.Node(key: key.value, venue: venue, beacon: beacon, x: place.x, y: place.y, floor: place.floor)
            try await withDatabase(connection) { try await $0.upsertNode(node, rssiOffset: rssiOffset) }
            print("node \(key)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a node.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The node's key.") var key: String

        func run() async throws {
            let key = try Slug(key, what: "node")
            try await withDatabase(connection) { try await $0.removeNode(key) }
            print("removed node \(key)")
        }
    }
}

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "user", abstract: "Add, update or remove users; make them incognito.",
                                                    subcommands: [Add.self, Remove.self, Forget.self, Incognito.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user, or update it if the key exists.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The user's key.") var key: String
        @Option(help: "A name to show.") var name: String?

        func run() async throws {
            let key = try Slug(key, what: "user")
            try await withDatabase(connection) { try await $0.upsertUser(key: key, name: name) }
            print("user \(key)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a user and their devices.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The user's key.") var key: String
        @Flag(help: "Erase the user instead, as `user forget` does.") var forget = false
        @OptionGroup var homeAssistant: HomeAssistantPrefix

        func run() async throws {
            let key = try Slug(key, what: "user")
            if forget {
                print(try await Forget.forget(key, connection: connection, homeAssistant: homeAssistant))
                return
            }
            try await withDatabase(connection) { try await $0.removeUser(key) }
            print("removed user \(key)")
        }
    }

    struct Incognito: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a user leave no trace for a while (their open session ends), or end that.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The user's key.") var key: String
        @Option(name: .customLong("for"), help: "How long, such as 2h or 30m.") var duration: String?
        @Flag(help: "End incognito now.") var off = false

        func validate() throws {
            guard (duration == nil) != !off else {
                throw ValidationError("give exactly one of --for DURATION or --off")
            }
        }

        func run() async throws {
            let key = try Slug(key, what: "user")
            let milliseconds = try duration.map { try DurationText.milliseconds($0, what: "--for") }
            if let milliseconds, milliseconds <= 0 {
                throw ValueError("--for '\(duration ?? "")' is not valid: expected a duration above 0")
            }
            let until = try await withDatabase(connection) { try await $0.setIncognito(user: key, for: milliseconds) }
            print(until.map { "user \(key) incognito until \(Timestamps.iso8601($0))" } ?? "user \(key) no longer incognito")
        }
    }
}

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "device", abstract: "Register or remove the devices users carry.",
                                                    subcommands: [Add.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a device to a user, or update it if it exists.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "Canonical identity: ibeacon:<uuid>:<major>:<minor>, altbeacon:..., eddystone:..., mac:... or node:<key>.")
        var identity: String
        @Option(help: "The user who carries it.") var user: String
        @Option(help: "A name to show.") var name: String?
        @Option(parsing: .unconditional, help: "Calibrated power at 1 m, dBm (overrides the frames).") var tx: Int?

        func run() async throws {
            let identity = try Identity(parsing: identity)
            let user = try Slug(user, what: "user")
            let device = Registry.Device(identity: identity.text, user: user.value, name: name, tx: try validTx(tx))
            try await withDatabase(connection) { try await $0.upsertDevice(device) }
            print("device \(identity) of \(user)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a device.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "Its canonical identity.") var identity: String

        func run() async throws {
            let identity = try Identity(parsing: identity)
            try await withDatabase(connection) { try await $0.removeDevice(identity) }
            print("removed device \(identity)")
        }
    }
}
