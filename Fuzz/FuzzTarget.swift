import PresenceCore

#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's entry point: every frame parser on one arbitrary input, or (for inputs starting with
/// "PIPE") the aggregator's pure path on the messages it describes (`AggregatorFuzz`). Built with
/// `-sanitize=fuzzer,address -DFUZZING` by scripts/fuzz.sh; without FUZZING the same code runs
/// saved inputs (crash reproducers, the corpus) given as arguments.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    FuzzInput.run(bytes)
    return 0
}

enum FuzzInput {
    // Small caches, so evictions happen and each run allocates little; otherwise the defaults.
    private static let policies: [AdvertisementDecoder.Options] = [
        .init(cacheCapacity: 64),
        .init(addresses: .all, hashing: AddressHasher(secret: "fuzz"), allow: ["ibeacon:", "mac:"], deny: ["ibeacon:0"],
              minimumRSSI: -90, includeScanResponses: true, telemetryMaxAge: 5, cacheCapacity: 8),
    ]

    /// The input read every way a scanner meets bytes: as one HCI event (with and without an H4
    /// indicator), as a run of length-prefixed events through stateful decoders, as advertising
    /// data, as manufacturer data, and as a btsnoop capture.
    static func run(_ bytes: [UInt8]) {
        if bytes.starts(with: AggregatorFuzz.magic) {
            AggregatorFuzz.run(bytes.dropFirst(AggregatorFuzz.magic.count))
            return
        }
        for report in HCIAdvertisingReports(event: bytes) { check(report) }
        for report in HCIAdvertisingReports(event: bytes.dropFirst()) { check(report) }

        for options in policies {
            var decoder = AdvertisementDecoder(options: options)
            var sightings: [Sighting] = []
            var position = 0
            var ts: Int64 = 0
            while position < bytes.count {
                let length = Int(bytes[position])
                let event = bytes[(position + 1) ..< min(bytes.count, position + 1 + length)]
                decoder.decode(event: event, ts: ts, into: &sightings)
                position += 1 + length
                ts += 3
            }
            for sighting in sightings { check(sighting) }
        }

        var structures = ADStructures(bytes)
        while let structure = structures.next() {
            _ = BeaconFrame(structure)
        }
        describe(BeaconFrame(advertisingData: bytes))
        describe(BeaconFrame(manufacturerData: bytes[...]))

        if var reader = try? BTSnoopReader(bytes) {
            var decoder = AdvertisementDecoder(options: policies[0])
            var sightings: [Sighting] = []
            while let event = reader.nextHCIEvent() {
                decoder.decode(event: event.packet, ts: event.unixMicroseconds / 1000, into: &sightings)
            }
        }
    }

    /// Everything the parsers say must be within what they promise.
    private static func check(_ report: AdvertisingReport) {
        precondition(report.data.count <= 255, "report data longer than its length byte allows")
        describe(BeaconFrame(advertisingData: report.data))
    }

    private static func check(_ sighting: Sighting) {
        precondition(SightingLimits.rssiRange.contains(sighting.rssi), "RSSI out of the contract's range")
        precondition(sighting.tx.map(SightingLimits.txRange.contains) ?? true, "tx out of the contract's range")
        precondition((try? Identity(parsing: sighting.id)) != nil, "not a canonical identity: \(sighting.id)")
    }

    private static func describe(_ frame: BeaconFrame) {
        if let identity = frame.beaconIdentity {
            precondition((try? Identity(parsing: identity))?.text == identity, "identity not canonical: \(identity)")
        }
        if case .eddystoneURL(let url) = frame { precondition(!url.url.isEmpty) }
        _ = frame.txPowerAt1m
    }
}

#if FUZZING
/// libFuzzer's driver, from the fuzzer runtime that `-sanitize=fuzzer` links in (its documented C
/// entry point for programs that have their own `main`).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM renames an executable's `main` to `<module>_main` and links `main` to it, so libFuzzer's
/// own `main` never runs; this hands the command line to libFuzzer's driver instead.
@_cdecl("presence_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzOneInput)
}
#else
/// Runs saved inputs through the same code: `presence-fuzz FILE...`.
@main
enum Reproduce {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let file = fopen(path, "rb") else {
                print("cannot open \(path)")
                exit(66)
            }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let read = fread(&buffer, 1, buffer.count, file)
                if read <= 0 { break }
                bytes.append(contentsOf: buffer[..<read])
            }
            fclose(file)
            FuzzInput.run(bytes)
            print("\(path): \(bytes.count) bytes, no crash")
        }
    }
}
#endif
