import Foundation
import Testing
@testable import PresenceCore

// The vectors in data/frames/vectors.json were collected from public parsers' tests and
// docs: citruz/beacontools (MIT), xorbit/py-decode-beacon (MIT), AltBeacon/android-beacon-library
// (Apache-2.0), Bluetooth-Devices/ibeacon-ble (MIT), Bluetooth-Devices/bluetooth-data-tools
// (Apache-2.0), theengs/decoder (GPL-3.0; iBeacon-framed entries only) and the Radius Networks
// ibeacon_scan example. Each entry names its repository, path and commit; SOURCE.txt beside the
// file gives the full attribution. The hex is copied verbatim; no code of those projects is used.

/// One entry of vectors.json.
struct FrameVector: Sendable, CustomTestStringConvertible {
    let id: String
    let kind: String
    let source: String
    let assertedBySource: Bool
    let bytes: [UInt8]
    let expected: [String: JSONValue]

    var testDescription: String { id }
}

enum FrameVectors {
    /// The file's entries, or why they could not be read.
    static let loaded: Result<[FrameVector], VectorFileError> = load()

    /// The entries, empty when the file is missing (a separate test then fails and says why).
    static var all: [FrameVector] { (try? loaded.get()) ?? [] }

    struct VectorFileError: Error, CustomStringConvertible {
        let description: String
    }

    private static func load() -> Result<[FrameVector], VectorFileError> {
        let url = TestFiles.vectors
        guard let data = FileManager.default.contents(atPath: url.path) else {
            return .failure(VectorFileError(description: "test vectors not found at \(url.path): the frame tests read the package's data/frames/vectors.json"))
        }
        do {
            guard let entries = try JSONValue.parse(data).array else {
                return .failure(VectorFileError(description: "\(url.path) is not a JSON array"))
            }
            var vectors: [FrameVector] = []
            for entry in entries {
                guard let object = entry.object, let id = object["id"]?.string, let kind = object["kind"]?.string,
                      let hex = object["hex"]?.string, let bytes = [UInt8](hex: hex),
                      let expected = object["expected"]?.object
                else {
                    return .failure(VectorFileError(description: "\(url.path): an entry lacks id, kind, hex or expected: \(entry)"))
                }
                vectors.append(FrameVector(
                    id: id, kind: kind,
                    source: "\(object["source_repo"]?.string ?? "?") \(object["source_path"]?.string ?? "?")",
                    assertedBySource: object["asserted_by_source"]?.bool ?? false,
                    bytes: bytes, expected: expected))
            }
            return .success(vectors)
        } catch {
            return .failure(VectorFileError(description: "\(url.path) is not valid JSON: \(error)"))
        }
    }
}
