import Foundation

/// What ended a wait on a socket.
enum SocketWaitOutcome {
    case ready
    case woken
    case timedOut
}

/// Waits with `poll()` until `socket` has one of `events`, `wakeFD` (if any) becomes readable, or
/// `timeoutMilliseconds` pass (-1: no limit). Interrupted waits are resumed.
func waitForSocket(_ socket: Int32, events: Int16, wakeFD: Int32 = -1, timeoutMilliseconds: Int32 = -1) -> SocketWaitOutcome {
    var fds = [
        pollfd(fd: socket, events: events, revents: 0),
        pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
    ]
    while true {
        let count = poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        if count < 0 && errno == EINTR { continue }
        if count == 0 { return .timedOut }
        if fds[1].revents != 0 { return .woken }
        return .ready
    }
}
