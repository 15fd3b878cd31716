import CSV
import Foundation
import PresenceCore

/// Writes rows as CSV by RFC 4180, through yaslab/CSV.swift: a header line, then one record per
/// row; fields holding a comma, a double quote, CR or LF are quoted (quotes doubled); every record,
/// the last one too, ends in CRLF.
public enum CSVOutput {
    public static func render(header: [String], rows: [[String]]) throws -> String {
        let stream = OutputStream(toMemory: ())
        let writer = try CSVWriter(stream: stream, newline: .crlf)
        try writer.write(row: header)
        for row in rows { try writer.write(row: row) }
        guard let data = stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data else {
            throw ValueError("the CSV writer kept no output")
        }
        return String(decoding: data, as: UTF8.self) + "\r\n"
    }
}
