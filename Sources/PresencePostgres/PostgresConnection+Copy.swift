import CLibPQ

extension PostgresConnection {
    /// Runs `COPY ... FROM STDIN` (text format) and streams `rows` to it in chunks of about 64 KB:
    /// values are tab-separated with `\\`, tab, newline and carriage return escaped, nil is `\N`.
    /// Returns the number of rows copied. Errors in the data, such as a constraint violation,
    /// arrive with the final result and are thrown after draining it; nothing is copied then.
    public func copyIn(_ sql: String, rows: [[String?]]) throws -> Int {
        let handle = try openHandle()
        guard let start = PQexec(handle, sql) else { throw PostgresError.libpq(result: nil, connection: handle) }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            _ = try take(start)
            throw PostgresError(kind: .usage, message: "copyIn needs a COPY ... FROM STDIN statement")
        }
        PQclear(start)

        var sendError: PostgresError?
        var encoder = CopyTextEncoder()
        for row in rows {
            encoder.append(row)
            if encoder.buffer.count >= CopyTextEncoder.chunkSize {
                sendError = send(encoder.take(), handle)
                if sendError != nil { break }
            }
        }
        if sendError == nil { sendError = send(encoder.take(), handle) }
        if sendError == nil, PQputCopyEnd(handle, nil) != 1 {
            sendError = PostgresError.libpq(result: nil, connection: handle)
        }

        var copied = 0
        var serverError: PostgresError?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                copied = Int(PQcmdTuples(result).map { String(cString: $0) } ?? "") ?? 0
            } else if serverError == nil {
                serverError = PostgresError.libpq(result: result, connection: handle)
            }
            PQclear(result)
        }
        if let error = serverError ?? sendError { throw error }
        return copied
    }

    private func send(_ bytes: [UInt8], _ handle: OpaquePointer) -> PostgresError? {
        guard !bytes.isEmpty else { return nil }
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                PQputCopyData(handle, chars.baseAddress, Int32(clamping: chars.count))
            }
        }
        return status == 1 ? nil : PostgresError.libpq(result: nil, connection: handle)
    }

    /// Leaves a COPY that `query()` or `execute(script:)` started by mistake: ends a COPY IN with
    /// an error, reads a COPY OUT to its end, then drains the results.
    func abandonCopy(_ status: ExecStatusType) {
        guard let handle else { return }
        if status == PGRES_COPY_IN {
            PQputCopyEnd(handle, "COPY is not supported here")
        } else {
            var buffer: UnsafeMutablePointer<CChar>?
            while PQgetCopyData(handle, &buffer, 0) >= 0 {
                if let buffer { PQfreemem(buffer) }
                buffer = nil
            }
        }
        while let result = PQgetResult(handle) { PQclear(result) }
    }
}

/// Builds COPY text-format rows into a byte buffer.
struct CopyTextEncoder {
    static let chunkSize = 64 * 1024
    private(set) var buffer: [UInt8] = []

    init() {
        buffer.reserveCapacity(Self.chunkSize + 4096)
    }

    mutating func append(_ row: [String?]) {
        for (index, value) in row.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: "\t")) }
            guard let value else {
                buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
                continue
            }
            appendEscaped(value)
        }
        buffer.append(UInt8(ascii: "\n"))
    }

    mutating func take() -> [UInt8] {
        defer { buffer.removeAll(keepingCapacity: true) }
        return buffer
    }

    private mutating func appendEscaped(_ value: String) {
        let utf8 = value.utf8
        guard utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else {
            buffer.append(contentsOf: utf8)
            return
        }
        for byte in utf8 {
            switch byte {
            case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
            case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            default: buffer.append(byte)
            }
        }
    }
}
