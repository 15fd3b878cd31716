import Foundation

/// What the listener's owner and its thread tell each other: start once, stop (also through a
/// pipe that wakes the thread's `poll()`), and "the thread has finished". `@unchecked Sendable`:
/// the flags are only touched with `condition` locked, and the pipe's descriptors never change.
final class ListenerSignals: @unchecked Sendable {
    private let condition = NSCondition()
    private var started = false
    private var stopRequested = false
    private var finished = false
    /// Readable once a stop was requested; -1 if the pipe could not be made (waits then time out).
    let wakeFD: Int32
    private let wakeWriteFD: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            }
        } else {
            fds = [-1, -1]
        }
        wakeFD = fds[0]
        wakeWriteFD = fds[1]
    }

    deinit {
        if wakeFD >= 0 { close(wakeFD) }
        if wakeWriteFD >= 0 { close(wakeWriteFD) }
    }

    /// True for the one caller that may start the thread: the first, and only before a stop.
    func claimStart() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !started, !stopRequested else { return false }
        started = true
        return true
    }

    var isStopRequested: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopRequested
    }

    func requestStop() {
        condition.lock()
        let first = !stopRequested
        stopRequested = true
        condition.unlock()
        if first, wakeWriteFD >= 0 {
            var byte: UInt8 = 1
            _ = write(wakeWriteFD, &byte, 1)
        }
    }

    /// Called by the thread as its last act.
    func markFinished() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once the thread has finished, at once if it never started.
    func waitUntilFinished() {
        condition.lock()
        defer { condition.unlock() }
        while started && !finished { condition.wait() }
    }
}
