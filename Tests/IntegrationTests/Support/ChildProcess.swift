import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its output going to files in a temporary folder.
/// Foundation's `Process.waitUntilExit` can hang on Linux under the test runner, so the tests
/// spawn and reap children themselves.
final class ChildProcess: @unchecked Sendable {  // pid and paths are immutable; status is behind a lock
    let pid: pid_t
    let name: String
    let stdoutPath: String
    let stderrPath: String
    private let lock = NSLock()
    private var exitStatus: Int32?

    private init(pid: pid_t, name: String, stdoutPath: String, stderrPath: String) {
        self.pid = pid
        self.name = name
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    /// Starts `path` with `arguments`; `environment` entries are added to this process's own.
    static func spawn(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws(TestSetupError) -> ChildProcess {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("presence-child-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw TestSetupError(message: "cannot create \(folder.path): \(error)")
        }
        let name = URL(fileURLWithPath: path).lastPathComponent
        let out = folder.appendingPathComponent("stdout").path
        let err = folder.appendingPathComponent("stderr").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        // The test runner's threads block signals; a child must not inherit that mask, or SIGTERM
        // would never reach it (nor anything it starts, such as the servers' own processes).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw TestSetupError(message: "cannot start \(path): \(String(cString: strerror(rc)))")
        }
        return ChildProcess(pid: pid, name: name, stdoutPath: out, stderrPath: err)
    }

    /// Sends `signal` (SIGTERM, SIGKILL, SIGSTOP...) to the child.
    func send(_ signal: Int32) {
        _ = kill(pid, signal)
    }

    /// The exit status if the child has ended (reaping it), else nil. Killed by a signal: 128 + signal.
    func poll() -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus = code
        return code
    }

    /// Waits for the child to end, up to `timeout`; returns its exit status or nil if still running.
    func wait(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let code = poll() { return code }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return poll()
    }

    /// Waits for the child to end. A thread of its own does the waiting, so that the awaiting task
    /// holds none of the concurrency pool's threads (two on two cores): the tasks of every other
    /// test running meanwhile need them.
    func wait() async -> Int32 {
        if let code = poll() { return code }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                // Named, so that a look at the process's threads tells it from the pool's.
                Thread.current.name = "child wait"
                continuation.resume(returning: self.waitBlocking())
            }
        }
    }

    /// Blocks the calling thread until the child ends: for synchronous code and short-lived tools only.
    func waitBlocking() -> Int32 {
        while true {
            if let code = poll() { return code }
            usleep(5_000)
        }
    }

    /// Stops the child with SIGTERM, then SIGKILL if it has not ended within `grace`.
    @discardableResult
    func stop(grace: Duration = .seconds(10)) async -> Int32 {
        if let code = poll() { return code }
        send(SIGTERM)
        if let code = await wait(timeout: grace) { return code }
        send(SIGKILL)
        return await wait(timeout: .seconds(5)) ?? -1
    }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    deinit {
        if poll() == nil {
            send(SIGKILL)
            _ = waitBlocking()
        }
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: stdoutPath).deletingLastPathComponent().path)
    }
}

/// Runs a tool to completion and returns its standard output, or throws with its standard error.
func runTool(_ path: String, _ arguments: [String], environment: [String: String] = [:]) async throws(TestSetupError) -> String {
    let child = try ChildProcess.spawn(path, arguments, environment: environment)
    return try child.output(status: await child.wait(), path: path, arguments: arguments)
}

/// `runTool` for the synchronous helpers that suites call as they are, in async tests and in
/// `eventually`'s conditions alike (a test database and its rows, a broker or a PostgreSQL of a
/// test's own): it holds the calling thread until the tool ends, so it runs only tools that end
/// within a moment.
func runToolBlocking(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws(TestSetupError) -> String {
    let child = try ChildProcess.spawn(path, arguments, environment: environment)
    return try child.output(status: child.waitBlocking(), path: path, arguments: arguments)
}

extension ChildProcess {
    /// What the ended tool printed if `status` is 0, else an error with what it printed on
    /// standard error.
    fileprivate func output(status: Int32, path: String, arguments: [String]) throws(TestSetupError) -> String {
        guard status == 0 else {
            throw TestSetupError(message: "\(path) \(arguments.joined(separator: " ")) exited \(status): \(stderr)")
        }
        return stdout
    }
}

/// A loopback TCP port nothing listens on right now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let rc = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 ? getsockname(fd, pointer, &length) : -1
        }
    }
    guard rc == 0 else { throw TestSetupError(message: "cannot find a free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
