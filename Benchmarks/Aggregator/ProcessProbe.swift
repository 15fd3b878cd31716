import Foundation

/// CPU time and memory of another process, from `/proc`.
struct ProcessProbe: Sendable {
    let pid: Int32

    /// User plus system CPU time so far, s.
    var cpuSeconds: Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The peak resident memory (VmHWM), MiB.
    var peakResidentMiB: Double { statusMiB("VmHWM:") }

    /// The resident memory now (VmRSS), MiB.
    var residentMiB: Double { statusMiB("VmRSS:") }

    /// A figure of `/proc/PID/status` given in kB, MiB (0 when it cannot be read).
    private func statusMiB(_ field: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
              let kib = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kib / 1024
    }

    /// This process's own CPU time, s.
    static var ownCPUSeconds: Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}
